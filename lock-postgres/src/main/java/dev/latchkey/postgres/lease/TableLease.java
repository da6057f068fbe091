package dev.latchkey.postgres.lease;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.postgres.shared.PgErrors;
import dev.latchkey.spi.ManagedLease;
import java.sql.SQLException;
import java.time.Duration;

/**
 * A lease of {@code mode=lease}: a row whose {@code expires_at} the server's clock enforces.
 * Renew and release go through the manager's pool (no connection is held meanwhile) and succeed
 * only while the row still carries this lease's id; renewals share the manager's one statement per
 * heartbeat tick ({@link LeaseRenewals}), which may renew this lease a little before its own
 * heartbeat is due. A renewal whose outcome is unknown may have extended the row further than this
 * lease knows; if the lease then runs out, the manager withdraws it from the row once the TTL of its
 * last renewal known to have landed is up — when the row would have expired anyway — so no phantom
 * extension outlives the lease.
 *
 * <p><b>Model.</b> As {@code model/pg-lease.pml} models it (see {@link LeaseTableLockManager}).
 */
final class TableLease extends ManagedLease {
    private final LeaseTableLockManager manager;
    /** When the write this lease's validity counts from was sent (what renewInStore last returned): its heartbeat is due a heartbeat later. */
    private volatile long reportedSentNanos;
    /** When the last write known to have landed (the acquisition, a renewal) was sent. */
    private volatile long landedSentNanos;
    /** The TTL that write set. */
    private volatile long landedTtlNanos;
    /** When the renewals whose outcome is unknown would expire at the latest (0: none since the last landed one). */
    private volatile long unknownUntilNanos;
    /** Guarded by the manager's {@link LeaseRenewals}: the outcome of a statement that carried this lease, not yet taken. */
    LeaseRenewals.Outcome outcome;
    /** Guarded by the manager's {@link LeaseRenewals}: a renewal of this lease waits for a statement. */
    boolean waiting;

    TableLease(LeaseTableLockManager manager, String key, String leaseId, long token, LeaseOptions options, long sentNanos) {
        super(manager.runtime, key, leaseId, token, options, sentNanos);
        this.manager = manager;
        this.landedSentNanos = sentNanos;
        this.landedTtlNanos = options.ttl().toNanos();
        this.reportedSentNanos = sentNanos;
        start();
        manager.renewals.add(this);
    }

    long landedSentNanos() {
        return landedSentNanos;
    }

    /** This lease's heartbeat interval (0: none, the application renews): when a batch may carry it early. */
    long heartbeatNanos() {
        return heartbeat().toNanos();
    }

    /** Whether this lease's own heartbeat is due by now (it then takes a batch's outcome itself). */
    boolean heartbeatDue(long nowNanos) {
        long heartbeat = heartbeatNanos();
        return heartbeat > 0 && nowNanos - (reportedSentNanos + heartbeat) >= 0;
    }

    /** What a statement that carried this lease did to its row (called by {@link LeaseRenewals} when it answers). */
    void recordInStore(LeaseRenewals.Outcome o) {
        if (o.error() == null) {
            landedSentNanos = o.sentNanos();
            landedTtlNanos = o.ttlNanos();
            unknownUntilNanos = 0;
        } else if (o.error().getCause() instanceof SQLException cause && PgErrors.outcomeUnknown(cause)) {
            long until = o.sentNanos() + o.ttlNanos();
            if (unknownUntilNanos == 0 || until - unknownUntilNanos > 0) unknownUntilNanos = until;
        }
    }

    @Override
    protected long renewInStore(Duration ttl, long sentNanos) {
        long landed = manager.renewals.renew(this, ttl); // the batch renews each lease by its own TTL, this one's by ttl
        reportedSentNanos = landed;
        return landed;
    }

    @Override
    protected void releaseInStore() {
        manager.renewals.remove(this); // no statement carries it from now on
        manager.release(this);
    }

    @Override
    protected void afterRelease() {
        manager.renewals.remove(this);
    }

    @Override
    protected void afterLoss(LeaseLostException cause) {
        manager.renewals.remove(this);
        long unknownUntil = unknownUntilNanos;
        if (!cause.reason().ranOutLocally() || unknownUntil == 0) return;
        manager.withdrawLater(key(), leaseId(), landedSentNanos + landedTtlNanos, unknownUntil);
    }
}
