# The scheduled run: one pipeline per state ID at a time, across every runner that shares the
# bucket. The lock lives beside Meltano's state, under its own prefix: state_backend.uri is
# s3://$STATE_BUCKET/state, the locks are s3://$STATE_BUCKET/locks/<key>.lock.
# S3_LOCK_PARAMS: empty on AWS S3; for a compatible store, e.g. "?endpoint=https://minio:9000&pathStyle=true".
# Credentials: the AWS SDK's default chain (AWS_ACCESS_KEY_ID…, profile, instance role).
latchkey run --uri "s3://$STATE_BUCKET/locks${S3_LOCK_PARAMS:-}" --key "$STATE_ID" -- meltano run tap-x target-y
