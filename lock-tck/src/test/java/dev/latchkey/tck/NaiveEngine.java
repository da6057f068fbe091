package dev.latchkey.tck;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.ManagedLease;
import dev.latchkey.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * A lease engine with the three classic mistakes the first Latchkey engine made, for
 * {@link TckSelfTest} to prove that {@link StoreFaultContract} catches each. Nothing here is for
 * real use.
 * <ul>
 *   <li>a renewal that misses counts as done if the record still carries the lease id — which is
 *       the same for every renewal, so it proves nothing about <em>this</em> write;</li>
 *   <li>a claim whose write throws is not read back, so one that landed is left as a phantom holder;</li>
 *   <li>all its managers share one runtime (renewer threads), so one hung store delays them all.</li>
 * </ul>
 * Records are {@code naive|<held>|<lease id>|<token>|<renewals>}; age comes from the store.
 */
final class NaiveEngine implements LockManager {
    private static final LeaseRuntime SHARED = LeaseRuntime.create(LockContext.defaults(), "naive");

    private final ConditionalStore store;

    NaiveEngine(ConditionalStore store) {
        this.store = store;
    }

    private record Rec(boolean held, String leaseId, long token, long renewals, long ttlMillis) {
        byte[] encode() {
            return ("naive|" + (held ? 1 : 0) + "|" + leaseId + "|" + token + "|" + renewals + "|" + ttlMillis)
                    .getBytes(StandardCharsets.UTF_8);
        }

        static Rec decode(StoredRecord r) {
            String[] f = new String(r.data(), StandardCharsets.UTF_8).split("\\|");
            return new Rec(f[1].equals("1"), f[2], Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]));
        }
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        LockKeys.validate(key);
        String name = LockNames.encode(key);
        long sent = System.nanoTime();
        Optional<StoredRecord> cur = store.read(name);
        Rec before = cur.map(Rec::decode).orElse(null);
        if (before != null && before.held() && cur.get().age().toMillis() < before.ttlMillis()) return Optional.empty();
        Rec mine = new Rec(true, UUID.randomUUID().toString(), before == null ? 1 : before.token() + 1, 0,
                options.ttl().toMillis());
        Optional<String> v = cur.isEmpty() ? store.create(name, mine.encode())
                : store.replace(name, cur.get().version(), mine.encode()); // throws: not read back
        if (v.isEmpty()) return Optional.empty();
        NaiveLease lease = new NaiveLease(key, name, mine, v.get(), options, sent);
        lease.begin();
        return Optional.of(lease);
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            Optional<Lease> l = tryAcquire(key, options);
            if (l.isPresent()) return l.get();
            if (System.nanoTime() > deadline) throw new LockTimeoutException(key, maxWait, null);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    @Override public Optional<LockInfo> inspect(String key) { LockKeys.validate(key); return Optional.empty(); }
    @Override public List<LockInfo> list(String prefix) { return List.of(); }
    @Override public boolean forceRelease(String key) { LockKeys.validate(key); return false; }
    @Override public boolean forceRelease(String key, String leaseId) { LockKeys.validate(key); return false; }
    @Override public Set<Capability> capabilities() { return Set.of(Capability.CONDITIONAL_STORE); }
    @Override public String description() { return "naive:" + store.describe(); }
    @Override public void close() {}

    private final class NaiveLease extends ManagedLease {
        private final String name;
        private Rec rec;
        private String version;

        NaiveLease(String key, String name, Rec rec, String version, LeaseOptions options, long sent) {
            super(SHARED, key, rec.leaseId(), rec.token(), options, sent);
            this.name = name;
            this.rec = rec;
            this.version = version;
        }

        void begin() {
            start();
        }

        @Override
        protected long renewInStore(Duration ttl, long sentNanos) {
            Rec next = new Rec(true, rec.leaseId(), rec.token(), rec.renewals() + 1, rec.ttlMillis());
            Optional<String> v = store.replace(name, version, next.encode());
            if (v.isPresent()) {
                rec = next;
                version = v.get();
                return sentNanos;
            }
            StoredRecord cur = store.read(name).orElseThrow(() -> lost("gone"));
            if (!Rec.decode(cur).leaseId().equals(rec.leaseId())) throw lost("taken");
            version = cur.version(); // "still ours, so the renewal landed": the mistake
            return sentNanos;
        }

        @Override
        protected void releaseInStore() {
            Rec free = new Rec(false, rec.leaseId(), rec.token(), rec.renewals(), rec.ttlMillis());
            if (store.replace(name, version, free.encode()).isEmpty()) throw lost("not ours");
        }

        private LeaseLostException lost(String why) {
            return new LeaseLostException(LeaseLostException.Reason.TAKEN_OVER, "naive lease on " + key() + ": " + why);
        }
    }
}
