package dev.latchkey.clickhouse;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.spi.ManagedLease;
import java.time.Duration;

/**
 * A won candidate row. Heartbeat inserts a newer version of the same {@code (state_id, lock_id)}
 * row — a higher {@code revision}, a fresh server-side {@code locked_at}, the original commit order
 * ({@code seq}), {@code acquired_at} and token, so its rank among candidates never moves — but only
 * while this row is still the live winner of its key, in one conditional {@code INSERT … SELECT}; a
 * row that was force-released (tombstone), expired, or out-ranked turns this lease lost instead of
 * being revived. Release writes a tombstone.
 *
 * <p><b>A heartbeat whose reply is lost</b> (timed out, connection reset) counts for nothing: the
 * renewal throws, and the lease stays valid only until the deadline the last confirmed write gave
 * it. That is safe whether or not the insert landed — if it did, the server's {@code locked_at}
 * moved later, so the store's expiry only moved away from the lease's deadline. The next heartbeat
 * has a higher revision, finds the row still the live winner (the lost one can only have given it
 * more time), and extends validity from its own send time. A lost heartbeat that the server
 * executes even later has a lower revision than the one after it, so it cannot move the row's
 * newest version. Each heartbeat waits at most {@code min(timeout, ttl/10)} for its reply, the
 * release {@code timeout} ({@link ClickHouseLockManager}).
 */
final class ClickHouseLease extends ManagedLease {
    private final ClickHouseLockManager manager;
    private final ClickHouseLockManager.Candidate row;
    // guarded by ManagedLease: renew and release run under its lock
    private long revision = 1;
    /** The heartbeat's request limits for {@code limitsTtl}, built once per TTL rather than per request. */
    private Duration limitsTtl;
    private ClickHouseStatements.Limits limits;

    ClickHouseLease(ClickHouseLockManager manager, ClickHouseLockManager.Candidate row, LeaseOptions options,
                    long requestSentNanos) {
        super(manager.runtime, row.key(), row.lockId(), row.token(), options, requestSentNanos);
        this.manager = manager;
        this.row = row;
        start();
    }

    @Override
    protected long renewInStore(Duration ttl, long sentNanos) {
        revision++;
        if (!manager.heartbeat(row, revision, ttl, limits(ttl))) {
            // a valid lease has not expired on the server (its deadline comes a margin earlier): broken
            throw new LeaseLostException(Reason.BROKEN, "lease on '" + key() + "' is no longer the holder in " + manager.description()
                    + ": it was force-released, or expired before this heartbeat");
        }
        return sentNanos;
    }

    @Override
    protected void checkTtl(Duration ttl) {
        manager.checkTtl(ttl);
    }

    private ClickHouseStatements.Limits limits(Duration ttl) {
        if (!ttl.equals(limitsTtl)) {
            limits = manager.heartbeatLimits(ttl);
            limitsTtl = ttl;
        }
        return limits;
    }

    @Override
    protected void releaseInStore() {
        if (!manager.releaseHeld(row)) {
            throw new LeaseLostException(Reason.BROKEN, "lease on '" + key() + "' had already been lost (force-released or expired) in "
                    + manager.description());
        }
    }
}
