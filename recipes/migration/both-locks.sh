# While runners move from the old lock to the new one, every run takes both: the old lock
# (here in the database the old check used) outside, the new one (beside the state) inside.
# A run is refused (75) if either is held, so old-style and new-style runners exclude each other.
# Once no runner takes the old lock alone, drop the outer `latchkey run … --`.
latchkey run --uri "$OLD_LOCK_URI" --key "$STATE_ID" -- \
  latchkey run --uri "$NEW_LOCK_URI" --key "$STATE_ID" -- meltano run tap-x target-y
