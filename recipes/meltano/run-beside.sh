# Meltano's --force ("run even if a pipeline with this state ID is running"): run beside the
# holder, which is left alone. latchkey warns, takes no lock and does not contact the bucket.
latchkey run --uri "s3://$STATE_BUCKET/locks${S3_LOCK_PARAMS:-}" --key "$STATE_ID" --bypass-lock -- meltano run --force tap-x target-y
