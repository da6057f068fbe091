package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.GENEROUS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A reply slower than the client's own request timeout, but well inside the TTL, never hands the
 * lock to anyone else while the holder's lease is valid. A client that gives up on a late reply
 * must not give up the lock with it: a PostgreSQL advisory lock, for one, is freed by the server
 * the moment the driver closes the session it waited on, while the holder's lease still had most
 * of its TTL to run.
 *
 * <p>The holder talks to the server through a {@link FaultProxy}; a contender on a direct
 * connection polls the key throughout ({@link TakeoverWatch}). Right after the acquisition the
 * proxy holds every reply of the server to the holder (its requests, a close too, still reach the
 * server), while the holder renews once by hand and its heartbeat keeps trying. The replies flow
 * again after the request timeout plus half of what is left to the lease's deadline, so before it;
 * the contender watches on until a TTL and a margin after the acquisition, past the time the store
 * would have freed a key nobody renewed. <b>Checked</b>: whenever the contender got the key, the
 * holder's lease was already invalid and its {@code onLost} had fired (a holder that stays valid
 * keeps the key; one that lost it knew first), and the grant came no earlier than the deadline the
 * acquisition gave the lease (TTL − TTL/5 after it was sent): the holder is alive and never
 * released, so only running out may free the key — a client that reports the loss of a session its
 * own timeout closed still fails; the renewal made during the stall returns or throws
 * a {@link LockException}, nothing else. Bounds are orderings; a loaded machine can only make the
 * lease lose (allowed), never make the check fail.
 *
 * <p>{@link NetworkFaultContract} runs it on every backend; a backend whose fault tests live
 * outside the contract runs it with {@link #run}.
 */
public final class SlowReplyCheck {
    private SlowReplyCheck() {}

    /**
     * Runs the check on {@code key}.
     *
     * @param holder         a manager whose URI names {@code proxy}
     * @param contender      a manager of the same locks, talking to the server directly
     * @param ttl            of the holder's lease; must leave more than {@code requestTimeout} before its deadline
     * @param requestTimeout the longest the holder's client waits for one reply; replies are held longer
     * @param backend        names the backend in the {@code fault-table:} line
     */
    public static void run(LockManager holder, FaultProxy proxy, LockManager contender, String key, Duration ttl,
                           Duration requestTimeout, String backend) throws Exception {
        Duration validity = ttl.minus(ttl.dividedBy(5));
        if (requestTimeout.compareTo(validity) >= 0) {
            throw new IllegalArgumentException("a request timeout of " + requestTimeout.toMillis() + " ms leaves a "
                    + ttl.toMillis() + " ms lease no time to hear a late reply before its deadline (TTL − TTL/5):"
                    + " use a longer TTL or a shorter timeout");
        }
        warmUp(holder, key + "/warm-up");
        long acquiring = System.nanoTime();
        Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(ttl).withOwner("slow-reply-holder"))
                .orElseThrow(() -> new AssertionError("a fresh key " + TckFixture.show(key) + " was held by someone"));
        AtomicLong lostAt = new AtomicLong();
        lease.onLost(e -> lostAt.set(System.nanoTime()));
        Duration contenderTtl = ttl.multipliedBy(4).compareTo(Duration.ofMinutes(2)) < 0 ? ttl.multipliedBy(4) : Duration.ofMinutes(2);
        TakeoverWatch contenderWatch = TakeoverWatch.start(contender, key, lease,
                LeaseOptions.ttl(contenderTtl).withOwner("slow-reply-contender"),
                Duration.ofMillis(Math.max(20, ttl.toMillis() / 50)));

        proxy.stall(FaultProxy.Direction.SERVER_TO_CLIENT);
        long fault = System.nanoTime();
        long leftToDeadline = acquiring + validity.toNanos() - fault;
        // late by more than the timeout; and, unless the acquisition itself was slow, healed before the deadline
        long held = requestTimeout.toNanos() + Math.max(0, leftToDeadline - requestTimeout.toNanos()) / 2;
        AtomicReference<Throwable> renewal = new AtomicReference<>();
        AtomicLong renewalNanos = new AtomicLong();
        Thread renewing = new Thread(() -> {
            try {
                lease.renew();
            } catch (Throwable t) {
                renewal.set(t);
            } finally {
                renewalNanos.set(System.nanoTime() - fault);
            }
        }, "tck-slow-reply-renewal");
        renewing.setDaemon(true);
        renewing.start();
        try {
            TckFixture.paceUntil(fault, Duration.ofNanos(held));
        } finally {
            proxy.heal();
        }
        renewing.join(GENEROUS.toMillis());
        assertThat(renewing.isAlive()).as("the renewal still waited %d s after its late reply came", GENEROUS.toSeconds()).isFalse();

        long watchUntil = acquiring + ttl.plus(ttl.dividedBy(5)).toNanos();
        Optional<Lease> taken = contenderWatch.awaitIfTaken(Duration.ofNanos(Math.max(0, watchUntil - System.nanoTime())));
        boolean validAtEnd = lease.isValid();
        if (taken.isPresent()) {
            contenderWatch.assertExclusion();
            // the holder neither released nor died: the store may let go no earlier than the TTL after the
            // acquisition was sent, and `acquiring` precedes that send; a margin earlier is an early free
            assertThat(contenderWatch.takenNanos() - (acquiring + validity.toNanos()))
                    .as("ns from the holder's earliest possible deadline to the contender's grant: the store freed the key"
                            + " of a live holder before its lease could have run out, because a reply was late (must be >= 0)")
                    .isNotNegative();
        }
        if (renewal.get() != null) {
            assertThat(renewal.get()).as("what the renewal whose reply was late threw").isInstanceOf(LockException.class);
        }

        long lost = lostAt.get();
        System.out.println("fault-table: " + backend + " | reply slower than the request timeout"
                + " | replies held " + TimeUnit.NANOSECONDS.toMillis(held) + " ms (timeout " + requestTimeout.toMillis()
                + " ms), the renewal " + (renewal.get() == null ? "returned" : "threw " + renewal.get().getClass().getSimpleName())
                + " after " + TimeUnit.NANOSECONDS.toMillis(renewalNanos.get()) + " ms; "
                + (lost == 0 ? "holder still valid" : "invalid " + TimeUnit.NANOSECONDS.toMillis(lost - fault) + " ms after the fault")
                + (taken.isPresent() ? ", the contender got the key " + TimeUnit.NANOSECONDS.toMillis(contenderWatch.takenNanos() - fault)
                        + " ms after it" : ", the contender never got the key")
                + " (TTL " + ttl.toMillis() + " ms)");
        try {
            if (taken.isPresent()) taken.get().release();
            else if (validAtEnd) lease.release();
        } catch (LockException e) {
            // clean-up only: the lease may have run out since; the managers' close frees what is left
        }
    }

    /**
     * Connections, schema and the server's write path in place before the fault: a cold server's
     * first write can take longer than a short request timeout. Retries what fails for up to
     * {@link TckFixture#GENEROUS}; nothing here is judged.
     */
    private static void warmUp(LockManager m, String key) throws InterruptedException {
        long start = System.nanoTime();
        while (true) {
            try {
                m.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(30)).withoutHeartbeat().withOwner("slow-reply-warm-up"))
                        .ifPresent(Lease::release);
                return;
            } catch (LockException e) {
                if (System.nanoTime() - start > GENEROUS.toNanos()) throw new AssertionError("the holder's client did not"
                        + " manage one acquire and release within " + GENEROUS.toSeconds() + " s before any fault", e);
                TckFixture.pace(Duration.ofMillis(100));
            }
        }
    }
}
