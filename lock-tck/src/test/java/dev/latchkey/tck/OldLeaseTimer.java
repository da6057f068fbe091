package dev.latchkey.tck;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A manager whose leases keep the heartbeat of the first {@code LeaseTimer}, for {@link TckSelfTest}:
 * a tick on a timer enforces the deadline and hands a due renewal to renewers whose threads start on
 * demand from the context's factory, catching only {@link RejectedExecutionException}. An Error from
 * a thread start (a thread limit) escapes the tick, so neither heartbeat nor deadline runs again: the
 * lease is never renewed and its {@code onLost} never fires. Leases and records are {@code real}'s
 * (taken without a heartbeat of their own). Nothing here is for real use.
 */
final class OldLeaseTimer implements LockManager {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "old-lease-timer");
        t.setDaemon(true);
        return t;
    });

    private final LockManager real;
    private final ThreadPoolExecutor renewers;

    OldLeaseTimer(LockManager real, LockContext context) {
        this.real = real;
        this.renewers = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                context.threadFactory().orElseThrow());
        this.renewers.allowCoreThreadTimeOut(true);
    }

    @Override public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        long sent = System.nanoTime();
        return real.tryAcquire(key, options.withoutHeartbeat()).map(l -> new OldLease(l, options, sent));
    }
    @Override public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        long sent = System.nanoTime();
        return new OldLease(real.acquire(key, maxWait, options.withoutHeartbeat()), options, sent);
    }
    @Override public Optional<LockInfo> inspect(String key) { return real.inspect(key); }
    @Override public List<LockInfo> list(String prefix) { return real.list(prefix); }
    @Override public boolean forceRelease(String key) { return real.forceRelease(key); }
    @Override public boolean forceRelease(String key, String leaseId) { return real.forceRelease(key, leaseId); }
    @Override public Set<Capability> capabilities() { return real.capabilities(); }
    @Override public String description() { return "old-lease-timer:" + real.description(); }
    @Override public void close() { real.close(); }

    private final class OldLease implements Lease {
        private final Lease d;
        private final LeaseOptions options;
        private final List<Consumer<? super LeaseLostException>> listeners = new CopyOnWriteArrayList<>();
        private volatile long validUntilNanos;
        private volatile long nextHeartbeatNanos;
        private volatile boolean renewing;
        private volatile boolean ended;

        OldLease(Lease d, LeaseOptions options, long sentNanos) {
            this.d = d;
            this.options = options;
            landed(sentNanos);
            TIMER.schedule(this::tick, options.heartbeat().toNanos(), TimeUnit.NANOSECONDS);
        }

        private void landed(long sentNanos) {
            validUntilNanos = sentNanos + options.ttl().toNanos() * 4 / 5;
            nextHeartbeatNanos = sentNanos + options.heartbeat().toNanos();
        }

        private void tick() {
            if (ended) return;
            long now = System.nanoTime();
            if (now - validUntilNanos >= 0) {
                ended = true;
                LeaseLostException e = new LeaseLostException(LeaseLostException.Reason.EXPIRED, "old timer: deadline");
                listeners.forEach(l -> l.accept(e));
                return;
            }
            if (!renewing && now - nextHeartbeatNanos >= 0) {
                renewing = true;
                try {
                    renewers.execute(this::heartbeat); // the old mistake: an Error from a thread start leaves the tick here
                } catch (RejectedExecutionException e) {
                    renewing = false;
                }
            }
            long at = renewing ? validUntilNanos : Math.min(nextHeartbeatNanos, validUntilNanos);
            TIMER.schedule(this::tick, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        private void heartbeat() {
            try {
                long sent = System.nanoTime();
                d.renew();
                landed(sent);
            } catch (RuntimeException e) {
                // retried at the next tick
            } finally {
                renewing = false;
            }
        }

        @Override public String key() { return d.key(); }
        @Override public String leaseId() { return d.leaseId(); }
        @Override public String owner() { return d.owner(); }
        @Override public long fencingToken() { return d.fencingToken(); }
        @Override public Instant acquiredAt() { return d.acquiredAt(); }
        @Override public Instant expiresAt() { return d.expiresAt(); }
        @Override public Duration ttl() { return d.ttl(); }
        @Override public boolean isValid() { return d.isValid(); }
        @Override public void renew() { d.renew(); }
        @Override public void release() { ended = true; d.release(); }
        @Override public void close() { release(); }
        @Override public void onLost(Consumer<? super LeaseLostException> l) { listeners.add(l); }
        @Override public LockInfo info() { return d.info(); }
    }
}
