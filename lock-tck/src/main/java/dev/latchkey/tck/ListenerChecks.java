package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockListener;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.LockContext;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The {@link LockListener} tests of {@link LockManagerContract}: a listener registered through
 * {@link LockContext#withListener} sees, for each key, acquired then released in that order; busy
 * when the key is held elsewhere (by {@code tryAcquire}, and by {@code acquire} after waiting at least
 * its {@code maxWait}); a loss with a reason that says what happened — {@link Reason#EXPIRED} for a
 * lease nobody renewed, and for a broken or taken-over lease a reason that admits another client
 * may be in (never one that {@linkplain Reason#ranOutLocally() ran out locally}); events never on the
 * caller's thread; and a listener that throws or blocks breaks no lease, renewal or release.
 */
record ListenerChecks(LockManagerContract contract) {
    private static final Duration SOON = TckFixture.GENEROUS;

    void listenerSeesAcquiredThenReleasedOffTheCallersThread() throws Exception {
        RecordingListener events = new RecordingListener();
        LockManager m = contract.manager(LockContext.defaults().withListener(events));
        String k = contract.key("events-order");
        Lease lease = m.tryAcquire(k, longLease()).orElseThrow(() -> new AssertionError("tryAcquire of a free key failed"));
        lease.release();

        events.await(k, "released", SOON);
        assertThat(events.typesOf(k)).as("events of one acquisition and release, in order").containsExactly("acquired", "released");
        List<RecordingListener.Event> seen = events.of(k);
        assertThat(seen.get(0).scheme()).as("scheme of the event").isNotBlank().isEqualTo(seen.get(1).scheme());
        assertThat(seen).allSatisfy(e -> {
            assertThat(e.duration()).as("duration of %s", e.type()).isGreaterThanOrEqualTo(Duration.ZERO);
            assertThat(e.thread()).as("thread of %s (never the caller's)", e.type()).isNotSameAs(Thread.currentThread());
        });
    }

    void listenerSeesBusyOnAHeldKey() throws Exception {
        LockManager holder = contract.manager(LockContext.defaults());
        RecordingListener events = new RecordingListener();
        LockManager contender = contract.manager(LockContext.defaults().withListener(events));
        String k = contract.key("events-busy");
        Lease held = holder.tryAcquire(k, longLease()).orElseThrow(() -> new AssertionError("tryAcquire of a free key failed"));
        try {
            assertThat(contender.tryAcquire(k, longLease())).as("tryAcquire of a held key").isEmpty();
            events.await(k, "busy", SOON);

            Duration maxWait = Duration.ofMillis(300);
            assertThatThrownBy(() -> contender.acquire(k, maxWait, longLease())).isInstanceOf(LockTimeoutException.class);
            awaitCount(events, k, "busy", 2);
            assertThat(events.of(k).get(1).duration()).as("waited, as acquire's busy event says").isGreaterThanOrEqualTo(maxWait);
            assertThat(events.typesOf(k)).as("events of a contender that never got the key").containsOnly("busy");
        } finally {
            held.release();
        }
    }

    void listenerSeesAnUnrenewedLeaseExpire() throws Exception {
        RecordingListener events = new RecordingListener();
        LockManager m = contract.manager(LockContext.defaults().withListener(events));
        String k = contract.key("events-expired");
        Duration ttl = contract.shortTtl().multipliedBy(2); // slack for a slow grant on a loaded machine
        m.tryAcquire(k, LeaseOptions.ttl(ttl).withoutHeartbeat())
                .orElseThrow(() -> new AssertionError("tryAcquire of a free key failed"));

        RecordingListener.Event lost = events.await(k, "lost", ttl.plus(SOON));
        assertThat(lost.cause().reason()).as("reason of a loss of a lease nobody renewed (%s)", lost.cause().getMessage())
                .isEqualTo(Reason.EXPIRED);
        assertThat(events.typesOf(k)).containsExactly("acquired", "lost");
    }

    void listenerSeesALossByForceReleaseWithItsReason() throws Exception {
        RecordingListener events = new RecordingListener();
        LockManager victim = contract.manager(LockContext.defaults().withListener(events));
        LockManager breaker = contract.manager(LockContext.defaults());
        String k = contract.key("events-broken");
        // a heartbeat finds the break (shortTtl/2 leaves a store paced to one write per record room to break)
        Lease lease = victim.tryAcquire(k, longLease().withHeartbeat(contract.shortTtl().dividedBy(2)))
                .orElseThrow(() -> new AssertionError("tryAcquire of a free key failed"));
        CompletableFuture<LeaseLostException> onLost = new CompletableFuture<>();
        lease.onLost(onLost::complete);

        assertThat(breaker.forceRelease(k)).as("forceRelease of a held key").isTrue();
        RecordingListener.Event lost = events.await(k, "lost", Duration.ofMinutes(1).plus(SOON));
        assertThat(lost.cause().reason()).as("reason of a loss by force release (%s)", lost.cause().getMessage())
                .isIn(Reason.BROKEN, Reason.SESSION_ENDED);
        assertThat(lost.cause()).as("the event's cause is the one onLost got").isSameAs(onLost.get(SOON.toSeconds(), TimeUnit.SECONDS));
        assertThat(events.typesOf(k)).containsExactly("acquired", "lost");
    }

    void listenerSeesALossByTakeoverWithAReasonThatAdmitsIt() throws Exception {
        RecordingListener events = new RecordingListener();
        LockManager victim = contract.manager(LockContext.defaults().withListener(events));
        LockManager other = contract.manager(LockContext.defaults());
        String k = contract.key("events-taken");
        Lease lease = victim.tryAcquire(k, longLease().withoutHeartbeat())
                .orElseThrow(() -> new AssertionError("tryAcquire of a free key failed"));
        assertThat(other.forceRelease(k)).as("forceRelease of a held key").isTrue();
        Lease next = other.tryAcquire(k, longLease()).orElseThrow(() -> new AssertionError("the broken key was not free"));
        try {
            assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
            RecordingListener.Event lost = events.await(k, "lost", SOON);
            assertThat(lost.cause().reason()).as("reason of a loss to a new holder (%s)", lost.cause().getMessage())
                    .isIn(Reason.TAKEN_OVER, Reason.BROKEN, Reason.SESSION_ENDED);
            assertThat(next.isValid()).as("the new holder after the old one learnt of its loss").isTrue();
        } finally {
            next.release();
        }
    }

    void throwingOrBlockingListenersBreakNoLease() throws Exception {
        CountDownLatch unblock = new CountDownLatch(1);
        RecordingListener calls = new RecordingListener();
        LockListener throwing = new RecordingListener() {
            @Override void record(String type, String scheme, String key, Duration d, LeaseLostException cause) {
                calls.record(type, scheme, key, d, cause);
                throw new IllegalStateException("listener fails on " + type + " (as the test wants)");
            }
        };
        LockListener blocking = new LockListener() {
            @Override public void acquired(String scheme, String key, Duration latency) {
                try {
                    unblock.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        LockManager a = contract.manager(LockContext.defaults().withListener(throwing));
        LockManager b = contract.manager(LockContext.defaults().withListener(blocking));
        LockManager contender = contract.manager(LockContext.defaults());
        String ka = contract.key("events-throwing");
        String kb = contract.key("events-blocking");
        Duration ttl = contract.shortTtl().multipliedBy(2); // heartbeat TTL/3
        try {
            Lease la = TckFixture.within(SOON, "tryAcquire with a throwing listener", () -> a.tryAcquire(ka, LeaseOptions.ttl(ttl)))
                    .orElseThrow(() -> new AssertionError("tryAcquire of a free key failed"));
            Lease lb = TckFixture.within(SOON, "tryAcquire with a blocking listener", () -> b.tryAcquire(kb, LeaseOptions.ttl(ttl)))
                    .orElseThrow(() -> new AssertionError("tryAcquire of a free key failed"));
            TckFixture.pace(ttl.multipliedBy(3).dividedBy(2)); // nothing to await: the heartbeats must carry both leases past their TTL
            assertThat(la.isValid()).as("lease of a manager whose listener throws, after 1.5 TTLs").isTrue();
            assertThat(lb.isValid()).as("lease of a manager whose listener blocks, after 1.5 TTLs").isTrue();
            assertThat(contender.tryAcquire(ka, longLease())).as("key of the throwing listener's lease").isEmpty();
            assertThat(contender.tryAcquire(kb, longLease())).as("key of the blocking listener's lease").isEmpty();
            TckFixture.within(SOON, "release with a throwing listener", () -> { la.release(); return null; });
            TckFixture.within(SOON, "release with a blocking listener", () -> { lb.release(); return null; });

            calls.await(ka, "released", SOON);
            assertThat(calls.count(ka, "renewed")).as("renewals the throwing listener was told of").isPositive();
            for (String k : List.of(ka, kb)) {
                Lease again = contender.tryAcquire(k, longLease()).orElseThrow(() -> new AssertionError("released key "
                        + TckFixture.show(k) + " was not free"));
                again.release();
            }
        } finally {
            unblock.countDown();
        }
    }

    /** Long enough to outlast any check; every backend accepts it (Azure blob leases: at most 60 s). */
    private static LeaseOptions longLease() {
        return LeaseOptions.ttl(Duration.ofSeconds(60));
    }

    private static void awaitCount(RecordingListener events, String k, String type, int n) throws InterruptedException {
        long start = System.nanoTime();
        while (events.count(k, type) < n && System.nanoTime() - start < SOON.toNanos()) TimeUnit.MILLISECONDS.sleep(10);
        assertThat(events.count(k, type)).as("'%s' events for %s", type, TckFixture.show(k)).isGreaterThanOrEqualTo(n);
    }
}
