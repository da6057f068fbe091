package dev.latchkey.postgres;

import dev.latchkey.LeaseOptions;
import dev.latchkey.spi.ManagedLease;
import java.time.Duration;

/**
 * A lease of {@code mode=lease}: a row whose {@code expires_at} the server's clock enforces.
 * Renew and release go through the manager's pool (no connection is held meanwhile) and succeed
 * only while the row still carries this lease's id.
 */
final class TableLease extends ManagedLease {
    private final LeaseTableLockManager manager;

    TableLease(LeaseTableLockManager manager, String key, String leaseId, long token, LeaseOptions options, long sentNanos) {
        super(manager.runtime, key, leaseId, token, options, sentNanos);
        this.manager = manager;
        start();
    }

    @Override
    protected long renewInStore(Duration ttl, long sentNanos) {
        manager.renew(this, ttl);
        return sentNanos;
    }

    @Override
    protected void releaseInStore() {
        manager.release(this);
    }
}
