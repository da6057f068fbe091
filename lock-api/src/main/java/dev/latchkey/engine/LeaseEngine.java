package dev.latchkey.engine;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.StoredRecord;
import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A complete {@link LockManager} over any {@link ConditionalStore}: the one lease engine that
 * object stores, {@code mem://} and {@code file://} share.
 *
 * <p><b>How it keeps the contract.</b> Each key has one record ({@link LeaseRecord}). Every state
 * change — acquire, renew, release, takeover, force release — is a single conditional write
 * against the version just read, so of two racing changes exactly one lands (mutual exclusion
 * rests on the store's compare-and-swap and nothing else). A held record is <em>stale</em>, and
 * may be taken over, only when one of these holds:
 * <ul>
 *   <li>the store's own clock says the version is at least the holder's TTL old
 *       ({@link StoredRecord#age()});</li>
 *   <li>the store cannot tell age, and this manager has watched the same version unchanged for a
 *       full TTL on its local monotonic clock (the approach of the DynamoDB lock client);</li>
 *   <li>the store says the holder's process is gone ({@link HolderLiveness}).</li>
 * </ul>
 * Wall clocks of clients are never compared. Release keeps the record ({@code RELEASED}) so the
 * fencing token of the next acquisition is always the previous one plus one; deleting a record
 * by hand resets the counter.
 *
 * <p><b>Re-acquiring a key this manager released</b> skips the read: the engine keeps the record
 * it released and that record's version, and tries one conditional write against it. It lands only
 * if nobody wrote the key since, in which case that record is exactly what a read would have
 * returned (versions are never reused for other data, see {@link ConditionalStore}); otherwise the
 * one read that rules out our own retried request is also the read the normal read-then-write
 * decides on, so a miss costs no more requests than not remembering at all. One request fewer
 * per acquire on object stores.
 *
 * <p>Renew and release after an ambiguous failure (an SDK retry whose first attempt landed) re-read
 * the record and accept it if it still carries this lease's id.
 */
public final class LeaseEngine implements LockManager {
    private static final long MIN_BACKOFF_NANOS = 1_000_000L;
    private static final Duration DEFAULT_MAX_POLL = Duration.ofMillis(100);

    private final ConditionalStore store;
    private final HolderLiveness liveness;
    private final TimeSource time;
    private final Set<Capability> capabilities;
    private final long maxPollNanos;
    /** Versions of held records this manager is watching for staleness, by name. */
    private final ConcurrentHashMap<String, Observation> observations = new ConcurrentHashMap<>();
    /** What this manager last released, by name; bounded so a manager touching many keys stays small. */
    private final ConcurrentHashMap<String, Released> released = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private record Observation(String version, long firstSeenNanos) {}

    private record Released(String version, LeaseRecord record) {}

    private static final int MAX_REMEMBERED_RELEASES = 1024;

    /**
     * The outcome of one attempt: a lease, or the record that blocked us. {@code looked} is what
     * the read after a missed write returned (empty: no record), or {@code null} if no write was
     * sent and so nothing was read.
     */
    private record Attempt(EngineLease lease, LeaseRecord holder, String seenVersion, Optional<StoredRecord> looked) {}

    public LeaseEngine(ConditionalStore store, LockContext context, Set<Capability> extraCapabilities) {
        this(store, context, extraCapabilities, DEFAULT_MAX_POLL);
    }

    /**
     * @param maxPoll longest pause between two looks at a held lock while waiting (each look is one
     *                read; the pause starts at 1 ms and doubles, with jitter)
     */
    public LeaseEngine(ConditionalStore store, LockContext context, Set<Capability> extraCapabilities,
                       Duration maxPoll) {
        this.store = Objects.requireNonNull(store, "store");
        this.liveness = store instanceof HolderLiveness ? (HolderLiveness) store : null;
        this.time = context.time();
        EnumSet<Capability> caps = EnumSet.of(Capability.FENCING_TOKENS, Capability.LIST, Capability.CONDITIONAL_STORE);
        caps.addAll(extraCapabilities);
        if (liveness != null) caps.add(Capability.HOLDER_DEATH_DETECTION);
        this.capabilities = Collections.unmodifiableSet(caps);
        this.maxPollNanos = maxPoll.toNanos();
    }

    /** The store under this engine (the TCK races its compare-and-swap directly). */
    public ConditionalStore store() {
        return store;
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        LockKeys.validate(key);
        ensureOpen();
        return Optional.ofNullable(attempt(key, options).lease());
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        LockKeys.validate(key);
        ensureOpen();
        String name = LockNames.encode(key);
        long deadline = time.nanoTime() + maxWait.toNanos();
        long backoff = MIN_BACKOFF_NANOS;
        while (true) {
            Attempt a = attempt(key, options);
            if (a.lease() != null) return a.lease();
            long remaining = deadline - time.nanoTime();
            if (remaining <= 0) {
                throw new LockTimeoutException(key, maxWait, a.holder() == null ? null : a.holder().toInfo());
            }
            long pause = Math.min(remaining, backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1));
            try {
                store.awaitChange(name, a.seenVersion(), Duration.ofNanos(pause));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockException("interrupted while waiting for lock '" + key + "'", e);
            }
            backoff = Math.min(backoff * 2, maxPollNanos);
            ensureOpen();
        }
    }

    private Attempt attempt(String key, LeaseOptions options) {
        String name = LockNames.encode(key);
        long sent = time.nanoTime();
        Released last = released.remove(name);
        Optional<StoredRecord> current = null;
        if (last != null) {
            Attempt again = write(key, name, options, last.version(), last.record(), last.record().token() + 1, sent);
            if (again.lease() != null) return again;
            // Someone wrote the key since: the read that told us it was not our own retry is as
            // fresh as another would be (our liveness mark is already dropped), so decide on it.
            current = again.looked();
        }
        if (current == null) current = store.read(name);
        if (current.isEmpty()) {
            return write(key, name, options, null, null, 1, sent);
        }
        StoredRecord stored = current.get();
        LeaseRecord rec = decode(stored, name, key);
        if (rec.held() && !isStale(name, stored, rec)) {
            return new Attempt(null, rec, stored.version(), null);
        }
        return write(key, name, options, stored.version(), rec, rec.token() + 1, sent);
    }

    /** Claims the key by one conditional write; {@code version == null} means "create". */
    private Attempt write(String key, String name, LeaseOptions options, String version, LeaseRecord previous,
                          long token, long sent) {
        String leaseId = newLeaseId();
        var now = time.now();
        LeaseRecord mine = new LeaseRecord(true, key, leaseId, options.owner(), token, now,
                options.ttl().toMillis(), now, options.metadata());
        if (liveness != null && !liveness.attach(name, token)) {
            return new Attempt(null, previous, version, null); // another live process is claiming this very acquisition
        }
        Optional<String> written;
        try {
            written = version == null ? store.create(name, mine.encode()) : store.replace(name, version, mine.encode());
        } catch (RuntimeException e) {
            if (liveness != null) liveness.detach(name, token);
            throw e;
        }
        if (written.isEmpty()) {
            // Lost the race — or a retried request of ours landed first: the record tells.
            Optional<StoredRecord> now2 = store.read(name);
            LeaseRecord seen = now2.map(r -> decode(r, name, key)).orElse(null);
            if (seen != null && seen.held() && seen.leaseId().equals(leaseId)) {
                written = Optional.of(now2.get().version());
            } else {
                if (liveness != null) liveness.detach(name, token);
                return new Attempt(null, seen, now2.map(StoredRecord::version).orElse(null), now2);
            }
        }
        observations.remove(name);
        EngineLease lease = new EngineLease(name, mine, written.get(), options, sent);
        lease.begin();
        return new Attempt(lease, null, null, null);
    }

    /**
     * A random version-4 UUID from {@link ThreadLocalRandom}: unique per acquisition, cheap, and
     * never contended. It need not be secret — it guards against mistakes, not against an
     * attacker who can already write the store.
     */
    private static String newLeaseId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long hi = (r.nextLong() & ~0xF000L) | 0x4000L;
        long lo = (r.nextLong() & ~(0xC000000000000000L)) | 0x8000000000000000L;
        return new UUID(hi, lo).toString();
    }

    private boolean isStale(String name, StoredRecord stored, LeaseRecord rec) {
        if (stored.age() != null) {
            if (stored.age().toMillis() >= rec.ttlMillis()) return true;
        } else {
            long now = time.nanoTime();
            Observation seen = observations.compute(name, (n, o) ->
                    o != null && o.version().equals(stored.version()) ? o : new Observation(stored.version(), now));
            if (now - seen.firstSeenNanos() >= Duration.ofMillis(rec.ttlMillis()).toNanos()) return true;
        }
        return liveness != null && !liveness.isAlive(name, rec.token());
    }

    private LeaseRecord decode(StoredRecord stored, String name, String expectedKey) {
        LeaseRecord rec = LeaseRecord.decode(stored.data(), store.describe() + " " + name);
        if (expectedKey != null && !expectedKey.equals(rec.key())) {
            throw new LockBackendException("record " + name + " in " + store.describe() + " belongs to key '"
                    + rec.key() + "', not '" + expectedKey + "'", false);
        }
        return rec;
    }

    @Override
    public Optional<LockInfo> inspect(String key) {
        LockKeys.validate(key);
        ensureOpen();
        String name = LockNames.encode(key);
        return store.read(name).map(r -> decode(r, name, key))
                .filter(LeaseRecord::held)
                .filter(rec -> liveness == null || liveness.isAlive(name, rec.token()))
                .map(LeaseRecord::toInfo);
    }

    @Override
    public List<LockInfo> list(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        ensureOpen();
        List<LockInfo> out = new ArrayList<>();
        for (String name : store.list(LockNames.listingPrefix(prefix))) {
            store.read(name).map(r -> decode(r, name, null))
                    .filter(rec -> rec.held() && rec.key().startsWith(prefix))
                    .filter(rec -> liveness == null || liveness.isAlive(name, rec.token()))
                    .ifPresent(rec -> out.add(rec.toInfo()));
        }
        out.sort(Comparator.comparing(LockInfo::key));
        return out;
    }

    @Override
    public boolean forceRelease(String key) {
        LockKeys.validate(key);
        ensureOpen();
        String name = LockNames.encode(key);
        for (int i = 0; i < 20; i++) {
            Optional<StoredRecord> current = store.read(name);
            if (current.isEmpty()) return false;
            LeaseRecord rec = decode(current.get(), name, key);
            if (!rec.held()) return false;
            if (store.replace(name, current.get().version(), rec.released(false).encode()).isPresent()) return true;
        }
        throw new LockBackendException("could not break lock '" + key + "' in " + store.describe()
                + ": it changed on every attempt", true);
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public String description() {
        return store.describe();
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            store.close();
        }
    }

    private void ensureOpen() {
        if (closed) throw new IllegalStateException("lock manager for " + store.describe() + " is closed");
    }

    /** A lease of this engine: renew and release are conditional writes on the version we wrote last. */
    private final class EngineLease extends dev.latchkey.spi.ManagedLease {
        private final String name;
        private LeaseRecord record;  // guarded by ManagedLease's serialisation of renew/release
        private String version;

        EngineLease(String name, LeaseRecord record, String version, LeaseOptions options, long sent) {
            super(record.key(), record.leaseId(), record.token(), options, time, sent);
            this.name = name;
            this.record = record;
            this.version = version;
        }

        void begin() {
            start();
        }

        @Override
        protected void renewInStore(Duration ttl) {
            LeaseRecord next = record.renewedAt(time.now());
            Optional<String> v = store.replace(name, version, next.encode());
            if (v.isPresent()) {
                version = v.get();
                record = next;
                return;
            }
            StoredRecord cur = ours("renew");
            version = cur.version(); // a retried write of ours landed
        }

        @Override
        protected void releaseInStore() {
            for (int i = 0; i < 3; i++) {
                LeaseRecord free = record.released(true);
                Optional<String> v = store.replace(name, version, free.encode());
                if (v.isPresent()) {
                    if (released.size() < MAX_REMEMBERED_RELEASES) released.put(name, new Released(v.get(), free));
                    return;
                }
                Optional<StoredRecord> cur = store.read(name);
                if (cur.isPresent()) {
                    LeaseRecord seen = decode(cur.get(), name, record.key());
                    if (!seen.held() && seen.leaseId().equals(leaseId())) return; // our retried release landed
                }
                version = ours("release").version();
            }
            throw new LockBackendException("could not release lock '" + key() + "' in " + store.describe()
                    + ": the record kept changing", true);
        }

        /** The current record if it is still this lease's, else throws {@link LeaseLostException}. */
        private StoredRecord ours(String what) {
            Optional<StoredRecord> cur = store.read(name);
            LeaseRecord seen = cur.map(r -> decode(r, name, record.key())).orElse(null);
            if (seen != null && seen.held() && seen.leaseId().equals(leaseId())) return cur.get();
            String now = seen == null ? "the record is gone"
                    : seen.held() ? "now held by " + seen.owner() + " (token " + seen.token() + ")"
                    : seen.leaseId().isEmpty() ? "it was force-released" : "it was released";
            throw new LeaseLostException("cannot " + what + " lease on '" + key() + "' (token " + fencingToken()
                    + "): " + now);
        }

        @Override
        protected void onLost(LeaseLostException cause) {
            if (liveness == null) return;
            // Keep the process mark until the TTL has really passed, so no one reads this
            // holder as dead before the store would let them in.
            dev.latchkey.spi.Heartbeats.later(safetyMargin(), () -> liveness.detach(name, fencingToken()));
        }

        @Override
        protected void afterRelease() {
            if (liveness != null) liveness.detach(name, fencingToken());
        }
    }
}
