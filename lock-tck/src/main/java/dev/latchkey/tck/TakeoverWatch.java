package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A contender that polls a held key on its own thread until it gets it, for tests that put a fault
 * under the holder and then check mutual exclusion as {@link Lease#isValid()} defines it: at the
 * moment the contender holds, the old holder's lease must already be invalid, and its loss
 * listener must already have fired. (Validity only ever goes from true to false, so checking it
 * right after the contender's grant is enough to catch an overlap of any real length.)
 *
 * <p>Store errors seen by the contender while it polls (the fault may be on the network it shares)
 * are retried, not failures: only what it finally holds is judged. Backend tests outside the
 * kit's contracts start one with {@link #start}.
 */
public final class TakeoverWatch {
    /** Tracks what the contender takes for the contract's clean-up; null outside a contract. */
    private final TckFixture fixture;
    private final LockManager contender;
    private final String key;
    private final Lease holder;
    private final LeaseOptions options;
    private final Duration poll;
    private final Thread thread;
    private final long startedNanos = System.nanoTime();
    private volatile long holderLostNanos;
    private volatile long takenNanos;
    private volatile boolean holderValidAtTakeover;
    private volatile Lease taken;
    private volatile Throwable failure;
    private volatile boolean stop;

    TakeoverWatch(TckFixture fixture, LockManager contender, String key, Lease holder, LeaseOptions options, Duration poll) {
        this.fixture = fixture;
        this.contender = contender;
        this.key = key;
        this.holder = holder;
        this.options = options;
        this.poll = poll;
        holder.onLost(e -> holderLostNanos = System.nanoTime());
        this.thread = new Thread(this::run, "tck-contender-" + key);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Starts a contender polling {@code key} every {@code poll}; {@code holder}'s loss is timed from now. */
    public static TakeoverWatch start(LockManager contender, String key, Lease holder, LeaseOptions options, Duration poll) {
        return new TakeoverWatch(null, contender, key, holder, options, poll);
    }

    private void run() {
        try {
            while (!stop) {
                Optional<Lease> l;
                try {
                    l = fixture == null ? contender.tryAcquire(key, options) : fixture.tryTake(contender, key, options);
                } catch (LockException e) {
                    TckFixture.pace(poll);
                    continue;
                }
                if (l.isPresent()) {
                    holderValidAtTakeover = holder.isValid();
                    takenNanos = System.nanoTime();
                    taken = l.get();
                    return;
                }
                TckFixture.pace(poll);
            }
        } catch (Throwable t) {
            failure = t;
        }
    }

    /** Waits for the takeover; fails if it did not come within {@code limit}. */
    public Lease await(Duration limit) throws InterruptedException {
        thread.join(limit.toMillis());
        stop = true;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        if (failure != null) throw new AssertionError("contender on " + TckFixture.show(key) + " failed", failure);
        if (taken == null) return fail("the contender still did not hold " + TckFixture.show(key) + " after "
                + limit.toMillis() + " ms (holder: " + TckFixture.describe(holder) + ")");
        return taken;
    }

    /** Waits up to {@code limit} for a takeover that is allowed but not promised; stops the contender either way. */
    Optional<Lease> awaitIfTaken(Duration limit) throws InterruptedException {
        thread.join(limit.toMillis());
        stop = true;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        if (failure != null) throw new AssertionError("contender on " + TckFixture.show(key) + " failed", failure);
        return Optional.ofNullable(taken);
    }

    /** After {@link #await}: the holder was invalid, and its listener had fired, when the contender got in. */
    public void assertExclusion() {
        assertThat(holderValidAtTakeover)
                .as("holder %s still valid when the contender got the key (%s), %d ms after the watch began: two valid leases",
                        TckFixture.describe(holder), TckFixture.describe(taken), TimeUnit.NANOSECONDS.toMillis(takenNanos - startedNanos))
                .isFalse();
        long lost = holderLostNanos;
        assertThat(lost).as("the holder's loss listener had fired when the contender got the key").isNotZero();
        assertThat(lost - takenNanos).as("ns from the contender's grant to the holder's loss listener (must be <= 0)")
                .isLessThanOrEqualTo(0);
    }

    /** When the contender got the key ({@link System#nanoTime()}); 0 before. */
    long takenNanos() {
        return takenNanos;
    }
}
