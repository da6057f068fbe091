package dev.latchkey.tck;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.StoredRecord;
import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * Deliberately wrong backends, each with one classic bug, for {@link TckSelfTest} to prove that
 * the contracts catch it. Nothing here is for real use.
 */
final class BrokenBackends {
    private static final AtomicLong VERSIONS = new AtomicLong();

    private BrokenBackends() {}

    /** One stored record of the broken stores; a {@code Map<String, Rec>} is their shared backing. */
    record Rec(byte[] data, String version, Instant writtenAt) {}

    /** Check-then-act with a pause in between: racing creators and replacers can all win. */
    static final class RacyStore implements ConditionalStore {
        private final Map<String, Rec> map;

        RacyStore(Map<String, Rec> shared) {
            this.map = shared;
        }

        @Override
        public Optional<StoredRecord> read(String name) {
            return Optional.ofNullable(map.get(name)).map(r -> new StoredRecord(r.data().clone(), r.version(), null));
        }

        @Override
        public Optional<String> create(String name, byte[] data) {
            if (map.containsKey(name)) return Optional.empty();
            window();
            return Optional.of(put(name, data));
        }

        @Override
        public Optional<String> replace(String name, String expectedVersion, byte[] data) {
            Rec cur = map.get(name);
            if (cur == null || !cur.version().equals(expectedVersion)) return Optional.empty();
            window();
            return Optional.of(put(name, data));
        }

        @Override
        public boolean delete(String name, String expectedVersion) {
            Rec cur = map.get(name);
            if (cur == null || !cur.version().equals(expectedVersion)) return false;
            map.remove(name);
            return true;
        }

        @Override
        public List<String> list(String prefix) {
            return map.keySet().stream().filter(n -> n.startsWith(prefix)).collect(Collectors.toList());
        }

        @Override
        public String describe() {
            return "racy://";
        }

        @Override
        public void close() {}

        private String put(String name, byte[] data) {
            String v = Long.toString(VERSIONS.incrementAndGet());
            map.put(name, new Rec(data.clone(), v, Instant.now()));
            return v;
        }

        /** The gap between check and write in which every other racer also passes the check. */
        static void window() {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Atomic create and replace, but a delete that looks first and then deletes whatever is there
     * (as a HEAD before a delete whose condition the server ignores): sequentially it refuses stale
     * versions like a correct store; a replace landing between look and delete is removed unseen.
     */
    static final class LookThenDeleteStore implements ConditionalStore {
        private final Map<String, Rec> map;
        private final VersionRuleStore atomic;

        LookThenDeleteStore(Map<String, Rec> shared) {
            this.map = shared;
            this.atomic = new VersionRuleStore(shared, (n, cur) -> Long.toString(VERSIONS.incrementAndGet()));
        }

        @Override
        public Optional<StoredRecord> read(String name) {
            return atomic.read(name);
        }

        @Override
        public Optional<String> create(String name, byte[] data) {
            return atomic.create(name, data);
        }

        /**
         * Lands 100 ms after it was sent (a store with latency), so that in every round of a race the
         * delete's look comes first and the replace lands in the delete's gap: the self-test must not
         * depend on which racer the scheduler starts first.
         */
        @Override
        public Optional<String> replace(String name, String expectedVersion, byte[] data) {
            pause(100);
            return atomic.replace(name, expectedVersion, data);
        }

        @Override
        public boolean delete(String name, String expectedVersion) {
            Rec cur = map.get(name);
            if (cur == null || !cur.version().equals(expectedVersion)) return false;
            pause(300); // the gap between the look and the delete, well past the replace's landing
            map.remove(name);
            return true;
        }

        private static void pause(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public List<String> list(String prefix) {
            return atomic.list(prefix);
        }

        @Override
        public String describe() {
            return "look-then-delete://";
        }

        @Override
        public void close() {}
    }

    /** How a broken store picks the version of a write: from the name and the record it replaces (null if none). */
    interface VersionRule {
        String next(String name, Rec current);
    }

    /** An atomic CAS map that is correct except for how it picks versions ({@link VersionRule}). */
    static final class VersionRuleStore implements ConditionalStore {
        private final Map<String, Rec> map;
        private final VersionRule rule;

        VersionRuleStore(Map<String, Rec> shared, VersionRule rule) {
            this.map = shared;
            this.rule = rule;
        }

        /** Versions count writes per name, starting again at 1 after a delete. */
        static VersionRuleStore restartingCounter(Map<String, Rec> shared) {
            return new VersionRuleStore(shared, (n, cur) -> cur == null ? "1" : Long.toString(Long.parseLong(cur.version()) + 1));
        }

        /** Versions are the writer's wall clock in milliseconds: two writes in one millisecond share one. */
        static VersionRuleStore millisecondStamps(Map<String, Rec> shared) {
            return new VersionRuleStore(shared, (n, cur) -> Long.toString(System.currentTimeMillis()));
        }

        /** Versions count this client's writes: another client's counter gives the same versions again. */
        static VersionRuleStore perClientCounter(Map<String, Rec> shared) {
            AtomicLong writes = new AtomicLong();
            return new VersionRuleStore(shared, (n, cur) -> Long.toString(writes.incrementAndGet()));
        }

        @Override
        public Optional<StoredRecord> read(String name) {
            return Optional.ofNullable(map.get(name)).map(r -> new StoredRecord(r.data().clone(), r.version(), null));
        }

        @Override
        public Optional<String> create(String name, byte[] data) {
            Rec fresh = new Rec(data.clone(), rule.next(name, null), Instant.now());
            return map.putIfAbsent(name, fresh) == null ? Optional.of(fresh.version()) : Optional.empty();
        }

        @Override
        public Optional<String> replace(String name, String expectedVersion, byte[] data) {
            Rec[] written = new Rec[1];
            map.computeIfPresent(name, (n, cur) -> {
                if (!cur.version().equals(expectedVersion)) return cur;
                written[0] = new Rec(data.clone(), rule.next(n, cur), Instant.now());
                return written[0];
            });
            return written[0] == null ? Optional.empty() : Optional.of(written[0].version());
        }

        @Override
        public boolean delete(String name, String expectedVersion) {
            Rec cur = map.get(name);
            return cur != null && cur.version().equals(expectedVersion) && map.remove(name, cur);
        }

        @Override
        public List<String> list(String prefix) {
            return map.keySet().stream().filter(n -> n.startsWith(prefix)).collect(Collectors.toList());
        }

        @Override
        public String describe() {
            return "version-rule://";
        }

        @Override
        public void close() {}
    }

    /** A correct CAS map whose record age is its writer's wall clock subtracted from the reader's. */
    static final class WallClockAgeStore implements ConditionalStore {
        private final Map<String, Rec> map;
        private final TimeSource time;

        WallClockAgeStore(Map<String, Rec> shared, TimeSource time) {
            this.map = shared;
            this.time = time;
        }

        @Override
        public Optional<StoredRecord> read(String name) {
            return Optional.ofNullable(map.get(name)).map(r -> new StoredRecord(r.data().clone(), r.version(),
                    Duration.between(r.writtenAt(), time.now())));
        }

        @Override
        public Optional<String> create(String name, byte[] data) {
            Rec fresh = rec(data);
            return map.putIfAbsent(name, fresh) == null ? Optional.of(fresh.version()) : Optional.empty();
        }

        @Override
        public Optional<String> replace(String name, String expectedVersion, byte[] data) {
            Rec fresh = rec(data);
            Rec after = map.computeIfPresent(name, (n, cur) -> cur.version().equals(expectedVersion) ? fresh : cur);
            return after == fresh ? Optional.of(fresh.version()) : Optional.empty();
        }

        @Override
        public boolean delete(String name, String expectedVersion) {
            Rec cur = map.get(name);
            return cur != null && cur.version().equals(expectedVersion) && map.remove(name, cur);
        }

        @Override
        public List<String> list(String prefix) {
            return map.keySet().stream().filter(n -> n.startsWith(prefix)).collect(Collectors.toList());
        }

        @Override
        public String describe() {
            return "wallclock://";
        }

        @Override
        public void close() {}

        private Rec rec(byte[] data) {
            return new Rec(data.clone(), Long.toString(VERSIONS.incrementAndGet()), time.now());
        }
    }

    /** The reference store, except that records look twice as old as they are: takeover at TTL/2. */
    static LockManager earlyExpiry(String name, LockContext context) {
        return new ConditionalStoreLockManager(memAged(name, "early-expiry", age -> age.multipliedBy(2)), context, Set.of());
    }

    /**
     * The reference store, except that it cannot tell a record's age, so contenders watch records for a
     * TTL on their own clocks — while the manager declares SERVER_SIDE_EXPIRY.
     */
    static LockManager localWatchClaimingServerExpiry(String name, LockContext context) {
        return new ConditionalStoreLockManager(memAged(name, "local-watch", age -> null), context, Set.of(Capability.SERVER_SIDE_EXPIRY));
    }

    /** {@code mem://name} whose records report {@code age} of their true age ({@code null}: no age). */
    private static ConditionalStore memAged(String name, String scheme, UnaryOperator<Duration> age) {
        MemConditionalStore mem = MemConditionalStore.named(name);
        return new ConditionalStore() {
            @Override public Optional<StoredRecord> read(String n) {
                return mem.read(n).map(r -> new StoredRecord(r.data(), r.version(), age.apply(r.age())));
            }
            @Override public Optional<String> create(String n, byte[] d) { return mem.create(n, d); }
            @Override public Optional<String> replace(String n, String v, byte[] d) { return mem.replace(n, v, d); }
            @Override public boolean delete(String n, String v) { return mem.delete(n, v); }
            @Override public List<String> list(String p) { return mem.list(p); }
            @Override public String describe() { return scheme + "://" + name; }
            @Override public void close() {}
        };
    }

    /**
     * A correct manager, except that {@code acquire} only polls: it looks, then sleeps {@code poll},
     * never woken by a release — while {@code real}'s NATIVE_WAIT is still declared.
     */
    static LockManager pollingOnly(LockManager real, Duration poll) {
        return new ForwardingLockManager("polling-only", real) {
            @Override public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
                long deadline = System.nanoTime() + maxWait.toNanos();
                while (true) {
                    Optional<Lease> l = real.tryAcquire(key, options);
                    if (l.isPresent()) return l.get();
                    long left = deadline - System.nanoTime();
                    if (left <= 0) throw new LockTimeoutException(key, maxWait, null);
                    try {
                        TimeUnit.NANOSECONDS.sleep(Math.min(left, poll.toNanos()));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new LockException("interrupted", e);
                    }
                }
            }
        };
    }

    /** A correct manager that hands out fencing token 1 to everyone while declaring FENCING_TOKENS. */
    static LockManager constantToken(LockManager real) {
        return new ForwardingLockManager("token-one", real) {
            @Override Lease wrap(Lease lease) { return new TokenOne(lease); }
            @Override public Optional<LockInfo> inspect(String key) { return real.inspect(key).map(BrokenBackends::tokenOne); }
            @Override public List<LockInfo> list(String prefix) {
                return real.list(prefix).stream().map(BrokenBackends::tokenOne).collect(Collectors.toList());
            }
        };
    }

    /**
     * A correct manager, except that {@link Lease#renew(Duration)} changes the TTL only locally
     * ({@code ttl()}, {@code expiresAt()}, {@code isValid()} follow it) and renews the store by the
     * TTL the lease was taken with, and {@link Lease#release(Duration)} keeps nothing.
     */
    static LockManager localTtlChange(LockManager real) {
        return new ForwardingLockManager("local-ttl", real) {
            @Override Lease wrap(Lease lease) { return new LocalTtl(lease); }
        };
    }

    private static final class LocalTtl implements Lease {
        private final Lease d;
        private volatile Duration ttl;
        private volatile Instant expiresAt;

        LocalTtl(Lease d) {
            this.d = d;
            this.ttl = d.ttl();
            this.expiresAt = d.expiresAt();
        }

        @Override public String key() { return d.key(); }
        @Override public String leaseId() { return d.leaseId(); }
        @Override public String owner() { return d.owner(); }
        @Override public long fencingToken() { return d.fencingToken(); }
        @Override public Instant acquiredAt() { return d.acquiredAt(); }
        @Override public Instant expiresAt() { return expiresAt; }
        @Override public Duration ttl() { return ttl; }
        @Override public boolean isValid() { return Instant.now().isBefore(expiresAt); }
        @Override public void renew() { renew(ttl); }
        @Override public void renew(Duration newTtl) {
            Instant now = Instant.now();
            d.renew();
            ttl = newTtl;
            expiresAt = now.plus(newTtl);
        }
        @Override public void release() { d.release(); }
        @Override public void release(Duration keepFor) { // keeps nothing
            d.release();
            expiresAt = Instant.EPOCH;
        }
        @Override public void close() { d.close(); }
        @Override public void onLost(Consumer<? super LeaseLostException> l) { d.onLost(l); }
        @Override public LockInfo info() { return d.info(); }
    }

    private static LockInfo tokenOne(LockInfo i) {
        return new LockInfo(i.key(), i.owner(), i.leaseId(), 1, i.acquiredAt(), i.expiresAt(), i.metadata());
    }

    private record TokenOne(Lease d) implements Lease {
        @Override public String key() { return d.key(); }
        @Override public String leaseId() { return d.leaseId(); }
        @Override public String owner() { return d.owner(); }
        @Override public long fencingToken() { return 1; }
        @Override public Instant acquiredAt() { return d.acquiredAt(); }
        @Override public Instant expiresAt() { return d.expiresAt(); }
        @Override public Duration ttl() { return d.ttl(); }
        @Override public boolean isValid() { return d.isValid(); }
        @Override public void renew() { d.renew(); }
        @Override public void release() { d.release(); }
        @Override public void close() { d.close(); }
        @Override public void onLost(Consumer<? super LeaseLostException> l) { d.onLost(l); }
        @Override public LockInfo info() { return tokenOne(d.info()); }
    }

    /**
     * A correct manager, except that a key found held is granted anyway, to a ghost lease that looks
     * valid and whose release does nothing: two holders at once that no release can notice, so only
     * the critical-section checker can catch them.
     */
    static LockManager doubleGrant(LockManager real) {
        return new ForwardingLockManager("double-grant", real) {
            @Override public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
                return Optional.of(real.tryAcquire(key, options).orElseGet(() -> new Ghost(key, options)));
            }
            @Override public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
                return tryAcquire(key, options).orElseThrow();
            }
        };
    }

    private record Ghost(String key, LeaseOptions options) implements Lease {
        @Override public String leaseId() { return "ghost"; }
        @Override public String owner() { return options.owner(); }
        @Override public long fencingToken() { return Long.MAX_VALUE; }
        @Override public Instant acquiredAt() { return Instant.now(); }
        @Override public Instant expiresAt() { return Instant.now().plus(options.ttl()); }
        @Override public Duration ttl() { return options.ttl(); }
        @Override public boolean isValid() { return true; }
        @Override public void renew() {}
        @Override public void release() {}
        @Override public void close() {}
        @Override public void onLost(Consumer<? super LeaseLostException> l) {}
        @Override public LockInfo info() { return new LockInfo(key, owner(), "ghost", 0, null, null, null); }
    }

    static String uniqueName() {
        return "broken-" + UUID.randomUUID();
    }
}
