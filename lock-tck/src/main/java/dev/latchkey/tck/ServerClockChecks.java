package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.show;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The server-clock tests of {@link LockManagerContract}, for a backend that declares
 * {@link Capability#SERVER_SIDE_EXPIRY} and gives the kit a {@link ServerClock}.
 * They hold the documented bound of such a backend, not more:
 * <ul>
 *   <li>A step <em>forward</em> by more than a lease's TTL may let a contender in while the holder
 *       still thinks it holds (the cost of expiry by the server's clock; not asserted away). If one
 *       gets in, its fencing token is greater than the holder's, the holder learns of it at its next
 *       renewal — its {@code onLost} fires with {@link LeaseLostException.Reason#TAKEN_OVER} (another
 *       client may be in: never a reason that {@linkplain LeaseLostException.Reason#ranOutLocally()
 *       ran out locally}, never {@code BROKEN}, which would blame a force release) and a message that
 *       says the lease had expired — and the old holder's release leaves the new holder alone. If
 *       none gets in (a backend that guards against the step), the holder still holds and can renew
 *       and release.</li>
 *   <li>A step <em>back</em> only delays expiry: the heartbeating holder keeps the key, renews it
 *       and releases it, and the next one gets it at once.</li>
 * </ul>
 * The server's clock is set back to real time after each test. Both wait for events, bounded by a
 * TTL plus {@link TckFixture#GENEROUS}; the two never run at once on one JVM (they share the server's clock).
 */
final class ServerClockChecks {
    /** The step forward, in TTLs of the holder's lease: a contender finds the lease long expired. */
    static final int STEP_TTLS = 12;
    /** The clock tests of every contract subclass in this JVM step a server's clock one at a time. */
    private static final ReentrantLock STEPPING = new ReentrantLock();

    private final TckFixture fx;
    private final ServerClock clock;
    private final Duration ttl;
    private final Duration poll;

    /**
     * @param ttl  the holder's TTL: long enough that its heartbeat (a third of it) does not renew on
     *             the stepped clock before a contender has looked
     * @param poll pause between a contender's tryAcquire calls
     */
    ServerClockChecks(TckFixture fx, ServerClock clock, Duration ttl, Duration poll) {
        this.fx = fx;
        this.clock = clock;
        this.ttl = ttl;
        this.poll = poll;
    }

    void stepForward() throws Exception {
        STEPPING.lock();
        try {
            LockManager a = open();
            LockManager b = open();
            LockManager c = open();
            String k = fx.key("clock-forward");
            Lease holder = fx.hold(a, k, lease("holder"));
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            holder.onLost(lost::complete);
            Duration step = ttl.multipliedBy(STEP_TTLS);
            Optional<Lease> next;
            long steppedNanos;
            long tookNanos;
            try {
                clock.step(step);
                steppedNanos = System.nanoTime();
                next = pollFor(b, k);
                tookNanos = System.nanoTime();
            } finally {
                clock.step(Duration.ZERO);
            }
            if (next.isEmpty()) { // the backend guards against the step (or renewed on the stepped clock first): the holder holds on
                System.out.println("fault-table: " + a.description() + " | server clock stepped " + step
                        + " | no contender got in for a TTL (TTL " + ttl.toMillis() + " ms)");
                assertThat(holder.isValid()).as("the holder, nobody having got in after a step of %s", step).isTrue();
                TckFixture.renewWhileValid(holder);
                holder.release();
                fx.hold(b, k, lease("after-release"));
                return;
            }
            Lease taker = next.get();
            if (LockManagerContract.declares(a, Capability.FENCING_TOKENS)) {
                assertThat(taker.fencingToken()).as("fencing token of the contender let in by a server-clock step of %s,"
                        + " against the old holder's %s", step, holder.fencingToken()).isGreaterThan(holder.fencingToken());
            }
            LeaseLostException why = awaitLoss(holder, lost, step);
            long learnedMillis = TckFixture.elapsedMillis(tookNanos);
            System.out.println("fault-table: " + a.description() + " | server clock stepped " + step + " | a contender got in "
                    + TimeUnit.NANOSECONDS.toMillis(tookNanos - steppedNanos) + " ms after it; the holder's onLost "
                    + learnedMillis + " ms after that, " + why.reason() + " (TTL " + ttl.toMillis() + " ms)");
            assertThat(why.reason()).as("the old holder's loss reason after a server-clock step of %s let a contender in"
                    + " (%s): another client may be in, and nobody force-released it", step, why.getMessage())
                    .isEqualTo(LeaseLostException.Reason.TAKEN_OVER);
            assertThat(why.getMessage().toLowerCase(Locale.ROOT)).as("the old holder's loss message: it must say the lease"
                    + " had expired (on the server's clock)").contains("expired");
            assertThat(holder.isValid()).as("the old holder after its loss listener fired").isFalse();

            try {
                holder.release();
            } catch (LeaseLostException expected) {
                // the lease is lost; what matters is that the release touched nothing of the new holder's
            }
            assertThat(taker.isValid()).as("the new holder after the old holder's release").isTrue();
            for (LockManager m : new LockManager[] {a, b, c}) {
                assertThat(m.inspect(k).map(LockInfo::leaseId)).as("the holder of %s after the old holder's release", show(k))
                        .contains(taker.leaseId());
            }
            assertThat(fx.tryTake(c, k, lease("third"))).as("a third client while the new holder holds").isEmpty();
            TckFixture.renewWhileValid(taker);
            taker.release();
        } finally {
            STEPPING.unlock();
        }
    }

    void stepBack() throws Exception {
        STEPPING.lock();
        try {
            LockManager a = open();
            LockManager b = open();
            String k = fx.key("clock-back");
            Lease holder = fx.hold(a, k, lease("holder"));
            Duration step = ttl.multipliedBy(STEP_TTLS).negated();
            try {
                clock.step(step);
                // through two thirds of a TTL: a heartbeat (a third) renews on the stepped-back clock
                long start = System.nanoTime();
                while (System.nanoTime() - start < ttl.multipliedBy(2).dividedBy(3).toNanos()) {
                    assertThat(fx.tryTake(b, k, lease("contender")))
                            .as("a contender while the holder heartbeats, the server's clock stepped %s", step).isEmpty();
                    TckFixture.pace(poll);
                }
                assertThat(holder.isValid()).as("the holder after a server-clock step of %s", step).isTrue();
                TckFixture.renewWhileValid(holder);
                holder.release();
                fx.hold(b, k, lease("after-release"));
            } finally {
                clock.step(Duration.ZERO);
            }
        } finally {
            STEPPING.unlock();
        }
    }

    private LockManager open() throws Exception {
        return fx.track(clock.open(LockContext.defaults()));
    }

    private LeaseOptions lease(String role) {
        return LeaseOptions.ttl(ttl).withOwner(fx.owner(role));
    }

    /** The first lease a contender polling for a TTL gets, if any. */
    private Optional<Lease> pollFor(LockManager contender, String k) throws InterruptedException {
        long start = System.nanoTime();
        do {
            Optional<Lease> got = fx.tryTake(contender, k, lease("contender"));
            if (got.isPresent()) return got;
            TckFixture.pace(poll);
        } while (System.nanoTime() - start < ttl.toNanos());
        return Optional.empty();
    }

    /** The holder's loss, which its next renewal (a heartbeat, a third of the TTL) must find. */
    private LeaseLostException awaitLoss(Lease holder, CompletableFuture<LeaseLostException> lost, Duration step) throws Exception {
        Duration limit = ttl.plus(TckFixture.GENEROUS);
        try {
            return lost.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("a server-clock step of " + step + " let a contender in, but the old holder's loss"
                    + " listener had not fired " + limit.toSeconds() + " s later (its next renewal must find the lease"
                    + " gone; valid now: " + holder.isValid() + ")");
        }
    }
}
