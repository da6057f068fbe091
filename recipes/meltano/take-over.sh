# Our --force: break the lease of the run that holds the lock (stuck, or its runner gone) and run
# in its place. Its latchkey finds the loss at its next heartbeat and kills its meltano (exit 76).
# Meltano's own --force is passed too: the broken run may still be marked running in Meltano's
# system database until its heartbeat goes stale, and that check would refuse this run.
latchkey run --uri "s3://$STATE_BUCKET/locks${S3_LOCK_PARAMS:-}" --key "$STATE_ID" --force -- meltano run --force tap-x target-y
