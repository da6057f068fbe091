package dev.latchkey.postgres;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ManagedLease;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A lease of {@code mode=lease}: a row whose {@code expires_at} the server's clock enforces.
 * Renew and release go through the manager's pool (no connection is held meanwhile) and succeed
 * only while the row still carries this lease's id. A renewal whose outcome is unknown may have
 * extended the row further than this lease knows; if the lease then runs out, the manager
 * withdraws it from the row once the TTL of its last renewal known to have landed is up — when
 * the row would have expired anyway — so no phantom extension outlives the lease.
 *
 * <p><b>Model.</b> As {@code model/pg-lease.pml} models it (see {@link LeaseTableLockManager}).
 */
final class TableLease extends ManagedLease {
    private final LeaseTableLockManager manager;
    /** When the last write known to have landed (the acquisition, a renewal) was sent. */
    private volatile long landedSentNanos;
    /** When the last renewal whose outcome is unknown was sent (0: none since the last landed one). */
    private volatile long unknownSentNanos;

    TableLease(LeaseTableLockManager manager, String key, String leaseId, long token, LeaseOptions options, long sentNanos) {
        super(manager.runtime, key, leaseId, token, options, sentNanos);
        this.manager = manager;
        this.landedSentNanos = sentNanos;
        start();
    }

    @Override
    protected long renewInStore(Duration ttl, long sentNanos) {
        try {
            manager.renew(this, ttl);
        } catch (LockBackendException e) {
            if (e.getCause() instanceof SQLException cause && PgErrors.outcomeUnknown(cause)) unknownSentNanos = sentNanos;
            throw e;
        }
        landedSentNanos = sentNanos;
        unknownSentNanos = 0;
        return sentNanos;
    }

    @Override
    protected void releaseInStore() {
        manager.release(this);
    }

    @Override
    protected void onLost(LeaseLostException cause) {
        long unknown = unknownSentNanos;
        if (!cause.reason().ranOutLocally() || unknown == 0) return;
        long ttl = ttl().toNanos();
        manager.withdrawLater(key(), leaseId(), landedSentNanos + ttl, unknown + ttl);
    }
}
