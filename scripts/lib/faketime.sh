# Sourced by the server scripts whose `start DIR --faketime` runs a server under libfaketime (Debian's
# `libfaketime`), so the kit's server-clock tests can step its wall clock: the offset lives in
# DIR/faketime, which the library reads at every call; monotonic clocks stay real.

# The library's path, or nothing.
faketime_lib() { ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n1 || true; }

# faketime_env DIR INSTALLER: sets the array `faketime` to the `env …` prefix that runs a server under
# libfaketime with its offset in DIR/faketime (starting at +0); fails naming INSTALLER if it is missing.
faketime_env() {
  local dir=$1 installer=$2 lib
  lib="$(faketime_lib)"
  [ -n "$lib" ] || { echo "no libfaketime.so.1 under /usr/lib/*/faketime: run $installer" >&2; return 1; }
  echo "+0" >"$dir/faketime"; chmod 644 "$dir/faketime"
  faketime=(env LD_PRELOAD="$lib" FAKETIME_TIMESTAMP_FILE="$dir/faketime" FAKETIME_NO_CACHE=1
    FAKETIME_DONT_FAKE_MONOTONIC=1)
}

# faketime_step DIR OFFSET: sets the server's clock to real time plus OFFSET (+120s, -30s, +0).
faketime_step() {
  local dir=$1 offset=$2
  [ -f "$dir/faketime" ] || { echo "$dir: not started with --faketime" >&2; return 2; }
  [[ "$offset" =~ ^[+-][0-9]+(\.[0-9]+)?[smhd]?$ ]] || { echo "offset '$offset': like +120s or -30s" >&2; return 2; }
  # written whole, then renamed: the server never reads a half-written offset
  echo "$offset" >"$dir/faketime.new"; chmod 644 "$dir/faketime.new"; mv -f "$dir/faketime.new" "$dir/faketime"
}
