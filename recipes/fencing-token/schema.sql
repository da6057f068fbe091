-- The protected store: each pipeline's state, with the fencing token of the run that wrote it.
CREATE TABLE IF NOT EXISTS pipeline_state (
  state_id text PRIMARY KEY,
  fence    bigint NOT NULL,          -- LATCHKEY_TOKEN of the last accepted writer
  state    jsonb NOT NULL,
  written  timestamptz NOT NULL DEFAULT now()
);
