#!/usr/bin/env bash
# Fail fast, never skip: when the lock cannot be taken because the backend is unreachable (69,
# also after retrying within --wait) or not installed (2), the job does not run and the status
# says why, with one stderr line; only a lock held by someone else is "busy" (75, or --busy-exit).
# So `--busy-exit 0` skips quietly only when another run holds the lock, never when the backend is down.
source "$(dirname "$0")/../lib/test-lib.sh"
standin job
dead_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
down="postgres://latchkey@127.0.0.1:$dead_port/latchkey"

STANDIN_NAME=down run_fg down latchkey run --uri "$down" --key nightly --busy-exit 0 -- job >/dev/null
expect_status down 69
expect_one_line down "^latchkey: PostgreSQL at 127.0.0.1:$dead_port/latchkey: connecting failed"
STANDIN_NAME=down-wait run_fg down-wait latchkey run --uri "$down" --key nightly --wait 2s --busy-exit 0 -- job >/dev/null
expect_status down-wait 69
expect_one_line down-wait "^latchkey: PostgreSQL at 127.0.0.1:$dead_port/latchkey: connecting failed"
STANDIN_NAME=unknown run_fg unknown latchkey run --uri "dynamodb://locks" --key nightly --busy-exit 0 -- job >/dev/null
expect_status unknown 2
expect_one_line unknown "^latchkey: no backend for scheme 'dynamodb'; installed schemes: .*postgres.*s3"
never_started down; never_started down-wait; never_started unknown
note "backend down: 69 (also with --wait); scheme not installed: 2; the job never ran"
