package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.GENEROUS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The renew, heartbeat and expiry tests of {@link LockManagerContract}: a renewed or heartbeating
 * lease outlives its TTL and nobody takes it meanwhile; an abandoned lease is taken over after its TTL
 * and never before, its holder then finds it lost; a lease-lost listener fires on a force release under
 * a heartbeating holder (before the lease's own deadline could end it), when an abandoned lease runs
 * out, and never on a normal release. Every bound is an ordering on the monotonic clock or tens of
 * seconds, so a loaded machine slows these tests without failing them.
 */
record ExpiryChecks(LockManagerContract contract) {

    void renewKeepsLeasePastItsTtl() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("renew");
        Duration ttl = contract.keepAliveTtl();
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner(contract.owner("renewer")));
        long start = System.nanoTime();
        int renewals = 0;
        while (System.nanoTime() - start < ttl.toNanos() * 3 / 2) {
            TckFixture.renewWhileValid(lease);
            renewals++;
            assertThat(lease.isValid()).isTrue();
            assertThat(contract.tryTake(b, k, contract.abandoned("contender")))
                    .as("contender after %d renewals, %d ms into a %d ms lease", renewals,
                            TckFixture.elapsedMillis(start), ttl.toMillis())
                    .isEmpty();
            TckFixture.pace(ttl.dividedBy(10));
        }
        assertThat(lease.isValid()).isTrue();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(lease.leaseId());
        lease.release();
        assertThat(b.inspect(k)).isEmpty();
    }

    void heartbeatKeepsLeaseAliveUnattended() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("heartbeat");
        Duration ttl = contract.keepAliveTtl();
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withOwner(contract.owner("heartbeat"))); // default heartbeat ttl/3
        AtomicBoolean lost = new AtomicBoolean();
        lease.onLost(e -> lost.set(true));
        long start = System.nanoTime();
        while (System.nanoTime() - start < ttl.toNanos() * 3 / 2) {
            assertThat(contract.tryTake(b, k, contract.abandoned("contender")))
                    .as("contender %d ms into a heartbeating %d ms lease", TckFixture.elapsedMillis(start), ttl.toMillis())
                    .isEmpty();
            assertThat(lease.isValid()).as("heartbeating lease %d ms in", TckFixture.elapsedMillis(start)).isTrue();
            TckFixture.pace(contract.pollInterval());
        }
        assertThat(lost).as("lease-lost listener of a heartbeating lease").isFalse();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(lease.leaseId());
        lease.release();
    }

    void abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("abandoned");
        Duration ttl = contract.shortTtl();
        long acquireStart = System.nanoTime();
        Lease old = contract.hold(a, k, contract.abandoned("crashed"));
        CountDownLatch lostFired = new CountDownLatch(1);
        old.onLost(e -> lostFired.countDown());

        Lease taken = contract.pollUntilAcquired(b, k, contract.longLease("successor"), contract.takeoverLimit());
        long takenAt = System.nanoTime();

        assertThat(Duration.ofNanos(takenAt - acquireStart))
                .as("time from the holder's acquire to the contender's takeover (TTL %s)", ttl)
                .isGreaterThanOrEqualTo(ttl);
        assertThat(old.isValid()).as("the abandoned lease once someone else holds the key").isFalse();
        assertThat(lostFired.await(GENEROUS.toMillis(), TimeUnit.MILLISECONDS))
                .as("lease-lost listener of the abandoned lease fired").isTrue();
        assertThatThrownBy(old::renew).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(old::release).isInstanceOf(LeaseLostException.class);
        assertThat(taken.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).as("inspect after the old holder's failed release")
                .contains(taken.leaseId());
        if (contract.declares(a, Capability.FENCING_TOKENS)) {
            assertThat(taken.fencingToken()).isGreaterThan(old.fencingToken());
        }
    }

    void lostListenerFiresWhenBrokenWhileHeartbeating() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("lost-listener");
        // A TTL far longer than the heartbeat: only a heartbeat can find the break before the
        // lease's own deadline (TTL - TTL/5) would end it anyway. The heartbeat (shortTtl/2) leaves
        // the breaker room on stores that take one write per interval to a record (GCS: shortTtl/3
        // is that interval, so a holder heartbeating at it would take every write slot).
        Duration wanted = GENEROUS.compareTo(contract.shortTtl().multipliedBy(10)) > 0 ? GENEROUS : contract.shortTtl().multipliedBy(10);
        Duration ttl = wanted.compareTo(contract.maxTtl()) > 0 ? contract.maxTtl() : wanted;
        long acquiring = System.nanoTime();
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withHeartbeat(contract.shortTtl().dividedBy(2)).withOwner(contract.owner("victim")));
        CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        AtomicBoolean validWhenFired = new AtomicBoolean(true);
        AtomicLong firedAt = new AtomicLong();
        lease.onLost(e -> {
            firedAt.set(System.nanoTime());
            validWhenFired.set(lease.isValid());
            lost.complete(e);
        });

        long broken = System.nanoTime();
        assertThat(b.forceRelease(k)).isTrue();
        LeaseLostException cause = lost.get(ttl.toSeconds() + GENEROUS.toSeconds(), TimeUnit.SECONDS);
        // the residual window of force release, measured: how long the broken holder stayed valid
        System.out.println("fault-table: " + contract.getClass().getSimpleName() + " | force release under a heartbeating holder | invalid "
                + TimeUnit.NANOSECONDS.toMillis(firedAt.get() - broken) + " ms after forceRelease was called (heartbeat "
                + contract.shortTtl().dividedBy(2).toMillis() + " ms)");

        assertThat(Duration.ofNanos(firedAt.get() - acquiring))
                .as("loss noticed before the lease's own deadline (%s of a %s TTL) could end it", ttl.multipliedBy(4).dividedBy(5), ttl)
                .isLessThan(ttl.multipliedBy(4).dividedBy(5));
        assertThat(cause.reason()).as("reason of a loss by force release (%s)", cause.getMessage())
                .isIn(LeaseLostException.Reason.BROKEN, LeaseLostException.Reason.SESSION_ENDED);
        assertThat(validWhenFired).as("isValid() as seen by the listener").isFalse();
        assertThat(lease.isValid()).isFalse();
        AtomicBoolean late = new AtomicBoolean();
        lease.onLost(e -> late.set(true));
        assertThat(late).as("a listener added after the loss runs at once").isTrue();
        assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
    }

    void lostListenerFiresWhenAbandonedLeaseRunsOut() throws Exception {
        LockManager a = contract.newManager();
        String k = contract.key("runs-out");
        Lease lease = contract.hold(a, k, contract.abandoned("forgetful"));
        CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        AtomicBoolean validWhenFired = new AtomicBoolean(true);
        lease.onLost(e -> {
            validWhenFired.set(lease.isValid());
            lost.complete(e);
        });
        assertThat(lost.get(contract.shortTtl().toSeconds() + GENEROUS.toSeconds(), TimeUnit.SECONDS)).isNotNull();
        assertThat(validWhenFired).as("isValid() as seen by the listener").isFalse();
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
    }

    void lostListenerIsNotCalledOnRelease() throws Exception {
        LockManager a = contract.newManager();
        String k = contract.key("released-not-lost");
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(contract.shortTtl()).withOwner(contract.owner("tidy")));
        AtomicBoolean lost = new AtomicBoolean();
        lease.onLost(e -> lost.set(true));
        long start = System.nanoTime();
        lease.release();
        // nothing to await: give a wrongly kept heartbeat or deadline task the time to misfire
        TckFixture.pace(Duration.ofNanos(contract.shortTtl().toNanos() * 3 / 2 - (System.nanoTime() - start)));
        assertThat(lost).as("lease-lost listener after a normal release").isFalse();
    }
}
