package dev.latchkey.engine;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.ManagedLease;
import dev.latchkey.spi.StoredRecord;
import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A lease of a {@link ConditionalStoreLockManager}: renew and release are conditional writes on the version of the
 * write of ours the store is known to hold.
 *
 * <p><b>Guarantee.</b> Every write of the lease carries a revision of its own, so after a renewal
 * whose outcome is unknown one read tells which of its writes the store holds.
 * {@link #renewInStore} reports as landed only a write the store was seen to hold — this renewal,
 * or an earlier one whose reply was lost, whose send time it then reports (and renews again at
 * once, so validity counts from now) — and throws when nothing is known to have landed; a store
 * that holds another lease's record, a released one or none makes it throw
 * {@link LeaseLostException} with the reason ({@code TAKEN_OVER}, {@code BROKEN}, {@code GONE}).
 * {@link #releaseInStore} treats a release of ours that an SDK retried and that landed as done,
 * and gives up after three refused writes with a retriable {@link LockBackendException}. On a store
 * that tracks holder liveness, the lease's process mark is dropped when it ends by release, and
 * only a safety margin after a loss, so no one reads the holder as dead before the store would let
 * them in. Store calls are serialised by {@link ManagedLease}, which guards the fields here.
 */
final class ConditionalStoreLease extends ManagedLease {
    private static final int MAX_UNCONFIRMED = 64;

    private final ConditionalStoreLockManager engine;
    private final ConditionalStore store;
    private final RecordStore records;
    private final HolderLiveness liveness;
    private final TimeSource time;
    private final String name;
    // guarded by ManagedLease's serialisation of renew/release
    private LeaseRecord record;  // the write of ours the store is known to hold
    private String version;      // its version
    private long lastRevision;   // the highest revision sent; never reused, so each write is unique
    /** Send times of renewals whose outcome is unknown, by revision. */
    private final TreeMap<Long, Long> unconfirmed = new TreeMap<>();

    ConditionalStoreLease(ConditionalStoreLockManager engine, String name, LeaseRecord record, String version, LeaseOptions options, long sent) {
        super(engine.runtime, record.key(), record.leaseId(), record.token(), options, sent);
        this.engine = engine;
        this.store = engine.store();
        this.records = engine.records;
        this.liveness = engine.liveness;
        this.time = engine.runtime.time();
        this.name = name;
        this.record = record;
        this.version = version;
    }

    void begin() {
        start();
    }

    @Override
    protected long renewInStore(Duration ttl, long sent) {
        long attemptSent = sent;
        Long confirmed = null; // send time of an earlier renewal found to have landed
        for (int attempt = 0; attempt < 2; attempt++) {
            long revision = ++lastRevision;
            LeaseRecord next = record.renewedAt(time.now(), revision, ttl.toMillis());
            unconfirmed.put(revision, attemptSent);
            if (unconfirmed.size() > MAX_UNCONFIRMED) unconfirmed.pollFirstEntry();
            Optional<String> v;
            try {
                records.pace(name);
                v = store.replace(name, version, next.encode());
            } catch (RuntimeException e) {
                if (confirmed != null) return confirmed; // this one's fate is unknown; the earlier one is sure
                throw e;
            }
            if (v.isPresent()) {
                adopt(next, v.get());
                return attemptSent;
            }
            Long landed = landedWrite(ours("renew"));
            if (landed == null) {
                if (confirmed != null) return confirmed;
                throw new LockBackendException("the store did not apply the renewal of the lease on '" + key()
                        + "' (a conflicting request in flight, or throttling) in " + store.describe()
                        + "; nothing was extended and the renewal is retried", true);
            }
            if (landed == attemptSent) return attemptSent; // an SDK retry of this very write landed
            // An earlier renewal whose reply was lost is what the store holds: validity counts
            // from when that one was sent. Write again right away, so it counts from now.
            confirmed = landed;
            attemptSent = time.nanoTime();
        }
        return confirmed;
    }

    /**
     * Takes {@code cur} (this lease's record) as the write the store holds; returns the send time
     * of that write if it is one of the renewals whose outcome was unknown, or null if the store
     * still holds the write already confirmed (nothing new landed).
     */
    private Long landedWrite(StoredRecord cur) {
        LeaseRecord seen = records.decode(cur, name, record.key());
        boolean sameWrite = seen.revision() == record.revision();
        Long sent = unconfirmed.get(seen.revision());
        adopt(seen, cur.version());
        return sameWrite ? null : sent;
    }

    private void adopt(LeaseRecord current, String currentVersion) {
        record = current;
        version = currentVersion;
        unconfirmed.headMap(current.revision(), true).clear();
    }

    @Override
    protected void releaseInStore() {
        for (int i = 0; i < 3; i++) {
            LeaseRecord free = record.released(true);
            records.pace(name);
            Optional<String> v = store.replace(name, version, free.encode());
            if (v.isPresent()) {
                engine.rememberRelease(name, v.get(), free);
                return;
            }
            Optional<StoredRecord> cur = store.read(name);
            if (cur.isPresent()) {
                LeaseRecord seen = records.decode(cur.get(), name, record.key());
                if (!seen.held() && seen.leaseId().equals(leaseId())) return; // our retried release landed
            }
            StoredRecord ours = ours("release");
            adopt(records.decode(ours, name, record.key()), ours.version());
        }
        throw new LockBackendException("could not release lock '" + key() + "' in " + store.describe()
                + ": the store did not apply the release three times", true);
    }

    /** The current record if it is still this lease's, else throws {@link LeaseLostException}. */
    private StoredRecord ours(String what) {
        Optional<StoredRecord> cur = store.read(name);
        LeaseRecord seen = cur.map(r -> records.decode(r, name, record.key())).orElse(null);
        if (record.sameLease(seen)) return cur.get();
        Reason reason;
        String now;
        if (seen == null) {
            reason = Reason.GONE;
            now = "the record is gone";
        } else if (seen.held()) {
            reason = Reason.TAKEN_OVER;
            // the record alone cannot tell which came first: a takeover of an expired record, or a
            // force release and then a fresh acquisition
            now = "now held by " + seen.owner() + " (token " + seen.token() + "): the lease had expired by the"
                    + " store's clock, or was force-released, before that holder took the key";
        } else if (seen.leaseId().isEmpty()) {
            reason = Reason.BROKEN;
            now = "it was force-released";
        } else {
            reason = Reason.TAKEN_OVER;
            now = "it was released" + (seen.leaseId().equals(leaseId()) ? "" : " by a later holder");
        }
        throw new LeaseLostException(reason, "cannot " + what + " lease on '" + key() + "' (token "
                + fencingToken() + "): " + now);
    }

    @Override
    protected void afterLoss(LeaseLostException cause) {
        if (liveness == null) return;
        // Keep the process mark until the TTL has really passed, so no one reads this
        // holder as dead before the store would let them in.
        runtime().later(safetyMargin(), () -> liveness.detach(name, fencingToken()));
    }

    @Override
    protected void afterRelease() {
        if (liveness != null) liveness.detach(name, fencingToken());
    }
}
