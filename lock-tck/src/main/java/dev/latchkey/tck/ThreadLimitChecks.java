package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.GENEROUS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The thread-limit tests of {@link LockManagerContract}: the holder's manager gets its threads from
 * a {@link RefusingThreads} factory in its {@link LockContext}, which fails every thread start as
 * the JDK does at a process's or container's thread limit ({@code OutOfMemoryError: unable to
 * create native thread}). A lease held while no thread can start is still lost by its deadline —
 * its {@code onLost} fires, with {@link LeaseLostException.Reason#NO_RENEWER_THREAD}, before anyone
 * else holds the key — and a lease whose refusal ends before its deadline renews and survives.
 * Bounds are orderings or tens of seconds, so a loaded machine slows these tests without failing them.
 */
record ThreadLimitChecks(LockManagerContract contract) {

    void leaseHeldWhileNoThreadCanStartIsLostBeforeAnyoneElseHoldsIt() throws Exception {
        RefusingThreads threads = new RefusingThreads();
        LockManager a = contract.manager(LockContext.defaults().withThreadFactory(threads));
        LockManager b = contract.newManager();
        String k = contract.key("thread-limit");
        Duration ttl = contract.shortTtl();
        long acquiring = System.nanoTime();
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withOwner(contract.owner("thread-starved")));
        CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        AtomicLong firedAt = new AtomicLong();
        lease.onLost(e -> {
            firedAt.set(System.nanoTime());
            threads.stopRefusing(); // starved for the whole lease; what the backend does after a loss needs threads again
            lost.complete(e);
        });
        try {
            TakeoverWatch watch = new TakeoverWatch(contract.fx, b, k, lease, contract.longLease("successor"), contract.pollInterval());
            watch.await(contract.takeoverLimit());
            watch.assertExclusion();
            LeaseLostException cause = lost.get(GENEROUS.toSeconds(), TimeUnit.SECONDS);
            System.out.println("fault-table: " + contract.getClass().getSimpleName() + " | no thread can start under the holder"
                    + " | onLost " + TimeUnit.NANOSECONDS.toMillis(firedAt.get() - acquiring) + " ms after the acquire began"
                    + " (TTL " + ttl.toMillis() + " ms, deadline " + ttl.multipliedBy(4).dividedBy(5).toMillis() + " ms)");

            assertThat(threads.refusals()).as("thread starts the holder's manager asked its context's factory for (none:"
                    + " the manager does not take its threads from LockContext.withThreadFactory)").isPositive();
            assertThat(cause.reason()).as("reason of the loss of a lease no renewer thread could be started for (%s)",
                    cause.getMessage()).isEqualTo(LeaseLostException.Reason.NO_RENEWER_THREAD);
            assertThat(Duration.ofNanos(firedAt.get() - acquiring))
                    .as("from the acquire to onLost of a lease no renewer thread could be started for (TTL %s)", ttl)
                    .isLessThan(ttl.plus(GENEROUS));
            assertThat(lease.isValid()).isFalse();
        } finally {
            threads.stopRefusing();
        }
    }

    void leaseRenewsOnceThreadsCanStartAgain() throws Exception {
        RefusingThreads threads = new RefusingThreads();
        LockManager a = contract.manager(LockContext.defaults().withThreadFactory(threads));
        LockManager b = contract.newManager();
        String k = contract.key("thread-limit-ends");
        Duration wanted = contract.keepAliveTtl().multipliedBy(2);
        Duration ttl = wanted.compareTo(contract.maxTtl()) > 0 ? contract.maxTtl() : wanted;
        long acquiring = System.nanoTime();
        // no thread starts until half the TTL: past the first heartbeat (TTL/3), well before the deadline (4/5 TTL)
        threads.refuseUntil(acquiring + ttl.toNanos() / 2);
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withOwner(contract.owner("thread-starved-for-a-while")));
        AtomicBoolean lost = new AtomicBoolean();
        lease.onLost(e -> lost.set(true));
        while (System.nanoTime() - acquiring < ttl.toNanos() * 3 / 2) {
            assertThat(lease.isValid()).as("lease %d ms into its %d ms TTL, whose thread starts were refused for its first"
                    + " %d ms (%d refused)", TckFixture.elapsedMillis(acquiring), ttl.toMillis(), ttl.toMillis() / 2,
                    threads.refusals()).isTrue();
            assertThat(contract.tryTake(b, k, contract.abandoned("contender")))
                    .as("contender %d ms into the %d ms lease", TckFixture.elapsedMillis(acquiring), ttl.toMillis()).isEmpty();
            TckFixture.pace(contract.pollInterval());
        }
        assertThat(threads.refusals()).as("thread starts the holder's manager asked its context's factory for while it"
                + " refused (none: it does not take its threads from LockContext.withThreadFactory)").isPositive();
        assertThat(lost).as("lease-lost listener of a lease whose thread limit ended before its deadline").isFalse();
        lease.release();
    }
}
