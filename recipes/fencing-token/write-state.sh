#!/bin/sh
# write-state.sh STATE_ID STATE_JSON: stores a pipeline's state in PostgreSQL ($STATE_DB, a libpq
# URI) unless a run holding a newer lease of the lock has written it: the fencing token of this
# run's lease (LATCHKEY_TOKEN, set by `latchkey run`) must be at least the stored one. Equal is
# this same run writing again; smaller is a run whose lease was broken or expired, writing late.
# Exit 0: written; 3: refused, a newer holder wrote (stop: this run no longer holds the lock);
# 2: no fencing token, so nothing could protect the write (see the backends without tokens).
set -eu
case "${LATCHKEY_TOKEN:-}" in
  '' | 0 | *[!0-9]*)
    echo "write-state: no fencing token (LATCHKEY_TOKEN='${LATCHKEY_TOKEN:-}'): run under 'latchkey run' on a backend that hands out tokens" >&2
    exit 2 ;;
esac
written=$(psql "$STATE_DB" -X -q -At -v ON_ERROR_STOP=1 -v id="$1" -v state="$2" -v token="$LATCHKEY_TOKEN" <<'SQL'
INSERT INTO pipeline_state AS s (state_id, fence, state)
VALUES (:'id', :'token'::bigint, :'state'::jsonb)
ON CONFLICT (state_id) DO UPDATE SET fence = EXCLUDED.fence, state = EXCLUDED.state, written = now()
  WHERE s.fence <= EXCLUDED.fence
RETURNING 'written';
SQL
)
if [ "$written" != written ]; then
  echo "write-state: refused the state of '$1' from token $LATCHKEY_TOKEN: a run with a newer token wrote it" >&2
  exit 3
fi
