package dev.latchkey.engine;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.ManagedLease;
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
 * fencing token of the next acquisition is always greater than the previous one
 * ({@link ConditionalStore#nextToken}); deleting a record by hand resets the counter.
 *
 * <p><b>Writes whose outcome is unknown.</b> A write that times out or loses its reply may have
 * landed, and a write answered "not written" may have been refused without applying anything (a
 * conflicting request, throttling). The engine never guesses:
 * <ul>
 *   <li>every write of a lease carries its own revision, so after a missed renewal one read tells
 *       which of this lease's writes the store holds; validity is extended only from the send time
 *       of that write (an earlier renewal whose reply was lost counts from when <em>it</em> was
 *       sent, and is then renewed again at once), never from a write that did not land;</li>
 *   <li>a claim that failed ambiguously is read back: if it landed, the caller gets the lease; if
 *       it may still land, it is withdrawn in the background, so no phantom holder blocks the key
 *       for a TTL.</li>
 * </ul>
 *
 * <p><b>Re-acquiring a key this manager released</b> skips the read: the engine keeps the record
 * it released and that record's version, and tries one conditional write against it. It lands only
 * if nobody wrote the key since, in which case that record is exactly what a read would have
 * returned (versions are never reused for other data, see {@link ConditionalStore}); otherwise the
 * one read that rules out our own retried request is also the read the normal read-then-write
 * decides on, so a miss costs no more requests than not remembering at all. One request fewer
 * per acquire on object stores.
 *
 * <p>Stores with a {@linkplain ConditionalStore#minWriteInterval() minimum write interval} get this
 * manager's writes to one record spaced by it, and refuse heartbeats faster than it. A claim such a
 * store refused although the record did not change (another client wrote it less than the interval
 * ago, e.g. its release) is sent once more after the interval, so {@code tryAcquire} of a free key
 * just released elsewhere takes the key rather than answering "held".
 *
 * <p><b>Parts.</b> This class acquires, inspects, lists and breaks locks; in this package,
 * {@code ConditionalStoreLease} is its lease (renewal and release in the store), {@code ClaimWithdrawal}
 * settles claims whose outcome is unknown, and {@code RecordStore} decodes records and spaces
 * writes.
 *
 * <p><b>Model.</b> {@code model/lease-engine.pml} is a spin model of this engine, its lease and
 * {@link ManagedLease} (three clients, lost, refused, failed and late writes, crashes, force release,
 * clock drift up to the margin), checked by {@code scripts/model-check.sh}; its comments name the
 * methods each step stands for, and {@code docs/model-checking.md} says what it proves for which
 * bounds and what it leaves out. A change to the protocol here belongs in the model too.
 */
public final class ConditionalStoreLockManager implements LockManager {
    /** The log of the engine and its parts ({@link ClaimWithdrawal}). */
    static final System.Logger LOG = System.getLogger(ConditionalStoreLockManager.class.getName());
    /** How many names the engine's per-name memories hold at most ({@link #rememberRelease}, {@link RecordStore}). */
    static final int MAX_REMEMBERED = 4096;
    private static final long MIN_BACKOFF_NANOS = 1_000_000L;
    private static final Duration DEFAULT_MAX_POLL = Duration.ofMillis(100);

    private final ConditionalStore store;
    // package-private: read by this engine's leases (ConditionalStoreLease)
    final HolderLiveness liveness;
    final LeaseRuntime runtime;
    final RecordStore records;
    private final TimeSource time;
    private final ClaimWithdrawal withdrawal;
    private final Set<Capability> capabilities;
    private final long maxPollNanos;
    private final long minWriteNanos;
    /** Versions of held records this manager is watching for staleness, by name. */
    private final ConcurrentHashMap<String, Observation> observations = new ConcurrentHashMap<>();
    /** What this manager last released, by name; bounded so a manager touching many keys stays small. */
    private final ConcurrentHashMap<String, Released> released = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private record Observation(String version, long firstSeenNanos) {}

    private record Released(String version, LeaseRecord record) {}

    /**
     * The outcome of one attempt: a lease, or the holder that blocked us (null if the key looked
     * free). {@code looked} is what the read after a missed write returned (empty: no record), or
     * {@code null} if no write was sent and so nothing was read.
     */
    private record Attempt(ConditionalStoreLease lease, LeaseRecord holder, String seenVersion, Optional<StoredRecord> looked) {}

    public ConditionalStoreLockManager(ConditionalStore store, LockContext context, Set<Capability> extraCapabilities) {
        this(store, context, extraCapabilities, DEFAULT_MAX_POLL);
    }

    /**
     * @param maxPoll longest pause between two looks at a held lock while waiting (each look is one
     *                read; the pause starts at 1 ms and doubles, with jitter)
     */
    public ConditionalStoreLockManager(ConditionalStore store, LockContext context, Set<Capability> extraCapabilities,
                       Duration maxPoll) {
        this.store = Objects.requireNonNull(store, "store");
        this.liveness = store.holderLiveness().orElse(null);
        this.time = context.time();
        this.runtime = LeaseRuntime.create(context, scheme(store.describe()));
        EnumSet<Capability> caps = EnumSet.of(Capability.FENCING_TOKENS, Capability.LIST, Capability.CONDITIONAL_STORE);
        caps.addAll(extraCapabilities);
        if (liveness != null) caps.add(Capability.HOLDER_DEATH_DETECTION);
        this.capabilities = Collections.unmodifiableSet(caps);
        this.maxPollNanos = maxPoll.toNanos();
        this.records = new RecordStore(store, time);
        this.minWriteNanos = records.minWriteNanos();
        this.withdrawal = new ClaimWithdrawal(store, records, runtime);
    }

    /** The store under this engine (the TCK races its compare-and-swap directly). */
    public ConditionalStore store() {
        return store;
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        LockKeys.validate(key);
        check(options);
        ensureOpen();
        long called = time.nanoTime();
        Lease lease = attempt(key, options).lease();
        if (lease == null) runtime.events().busy(key, called);
        return Optional.ofNullable(lease);
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        LockKeys.validate(key);
        check(options);
        ensureOpen();
        String name = LockNames.encode(key);
        long called = time.nanoTime();
        long deadline = called + maxWait.toNanos();
        long backoff = MIN_BACKOFF_NANOS;
        while (true) {
            Attempt a = attempt(key, options);
            if (a.lease() != null) return a.lease();
            long remaining = deadline - time.nanoTime();
            if (remaining <= 0) {
                runtime.events().busy(key, called);
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

    /** Refuses a heartbeat faster than the store lets one client write one record. */
    private void check(LeaseOptions options) {
        if (minWriteNanos > 0 && options.heartbeatEnabled() && options.heartbeat().toNanos() < minWriteNanos) {
            throw new IllegalArgumentException(store.describe() + " takes at most one write per "
                    + store.minWriteInterval().toMillis() + " ms to a lock record, so the heartbeat (" + options.heartbeat()
                    + ") cannot be shorter: use a TTL of at least " + store.minWriteInterval().multipliedBy(3).toMillis()
                    + " ms (heartbeat TTL/3) or a longer heartbeat");
        }
    }

    private Attempt attempt(String key, LeaseOptions options) {
        String name = LockNames.encode(key);
        long sent = time.nanoTime();
        Released last = released.remove(name);
        Optional<StoredRecord> current = null;
        if (last != null) {
            Attempt again = write(key, name, options, last.version(), last.record(), sent, false);
            if (again.lease() != null) return again;
            // Someone wrote the key since: the read that told us it was not our own retry is as
            // fresh as another would be (our liveness mark is already dropped), so decide on it.
            current = again.looked();
        }
        if (current == null) current = store.read(name);
        if (current.isEmpty()) {
            return write(key, name, options, null, null, sent, false);
        }
        StoredRecord stored = current.get();
        LeaseRecord rec = records.decode(stored, name, key);
        if (rec.held() && !isStale(name, stored, rec)) {
            return new Attempt(null, rec, stored.version(), null);
        }
        return write(key, name, options, stored.version(), rec, sent, false);
    }

    /**
     * Claims the key by one conditional write; {@code version == null} means "create". On a store
     * with a minimum write interval, a claim refused while the record stayed as it expected is sent
     * once more, that interval after the refusal ({@code again} marks that second try).
     */
    private Attempt write(String key, String name, LeaseOptions options, String version, LeaseRecord previous,
                          long sent, boolean again) {
        String leaseId = newLeaseId();
        long token = store.nextToken(previous == null ? 0 : previous.token());
        var now = time.now();
        LeaseRecord mine = new LeaseRecord(true, key, leaseId, options.owner(), token, 0, now,
                options.ttl().toMillis(), now, options.metadata());
        if (liveness != null && !liveness.attach(name, token)) {
            return new Attempt(null, previous, version, null); // another live process is claiming this very acquisition
        }
        Optional<String> written;
        try {
            records.pace(name);
            written = version == null ? store.create(name, mine.encode()) : store.replace(name, version, mine.encode());
        } catch (RuntimeException e) {
            Optional<String> landed = withdrawal.resolveFailedClaim(name, key, version, mine, sent, e);
            if (landed.isEmpty()) {
                if (liveness != null) liveness.detach(name, token);
                throw e;
            }
            written = landed;
        }
        if (written.isEmpty()) {
            // Not written — or a retried request of ours landed first: the record tells.
            Optional<StoredRecord> now2;
            try {
                now2 = store.read(name);
            } catch (RuntimeException e) {
                // cannot tell whether a retry of ours landed: withdraw it if it did
                withdrawal.withdrawLater(name, key, version, mine, sent, ClaimWithdrawal.FIRST_WITHDRAW_NANOS);
                if (liveness != null) liveness.detach(name, token);
                throw e;
            }
            LeaseRecord seen = now2.map(r -> records.decode(r, name, key)).orElse(null);
            if (mine.sameLease(seen)) {
                written = Optional.of(now2.get().version());
            } else {
                if (liveness != null) liveness.detach(name, token);
                if (!again && minWriteNanos > 0 && ClaimWithdrawal.mayStillLand(version, now2)) {
                    // Refused, yet nobody wrote: the store's per-record write rate (another client
                    // wrote the record less than the interval ago). The refusal came after that write,
                    // so the same claim may land once the interval has passed since the refusal.
                    records.sleep(minWriteNanos, name);
                    return write(key, name, options, version, previous, sent, true);
                }
                LeaseRecord holder = seen != null && seen.held() ? seen : null;
                return new Attempt(null, holder, now2.map(StoredRecord::version).orElse(null), now2);
            }
        }
        observations.remove(name);
        ConditionalStoreLease lease = new ConditionalStoreLease(this, name, mine, written.get(), options, sent);
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

    @Override
    public Optional<LockInfo> inspect(String key) {
        LockKeys.validate(key);
        ensureOpen();
        String name = LockNames.encode(key);
        return store.read(name).map(r -> records.decode(r, name, key))
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
            store.read(name).map(r -> records.decode(r, name, null))
                    .filter(rec -> rec.held() && rec.key().startsWith(prefix))
                    .filter(rec -> liveness == null || liveness.isAlive(name, rec.token()))
                    .ifPresent(rec -> out.add(rec.toInfo()));
        }
        out.sort(Comparator.comparing(LockInfo::key));
        return out;
    }

    @Override
    public boolean forceRelease(String key) {
        return breakLock(key, null);
    }

    @Override
    public boolean forceRelease(String key, String leaseId) {
        return breakLock(key, Objects.requireNonNull(leaseId, "leaseId"));
    }

    /** Marks the record released (lease id cleared) if it is held — by {@code leaseId}, unless null. */
    private boolean breakLock(String key, String leaseId) {
        LockKeys.validate(key);
        ensureOpen();
        String name = LockNames.encode(key);
        for (int i = 0; i < 20; i++) {
            records.pace(name); // before the read: the version written against is as fresh as it can be
            Optional<StoredRecord> current = store.read(name);
            if (current.isEmpty()) return false;
            LeaseRecord rec = records.decode(current.get(), name, key);
            if (!rec.held() || (leaseId != null && !leaseId.equals(rec.leaseId()))) return false;
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

    /** Remembers the record a lease of this manager released, and its version, for re-acquiring the key. */
    void rememberRelease(String name, String version, LeaseRecord free) {
        if (released.size() < MAX_REMEMBERED) released.put(name, new Released(version, free));
    }

    private void ensureOpen() {
        if (closed) throw new IllegalStateException("lock manager for " + store.describe() + " is closed");
    }

    private static String scheme(String description) {
        int colon = description.indexOf(':');
        return colon > 0 ? description.substring(0, colon) : "store";
    }
}
