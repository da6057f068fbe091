package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The checks of {@link Capability#SERVER_SIDE_EXPIRY} and {@link Capability#NATIVE_WAIT} that
 * {@link LockManagerContract} runs for a backend declaring them. Each fails — deterministically, not
 * by timing luck — on a backend that declares the capability but does not keep it:
 * <ul>
 *   <li>SERVER_SIDE_EXPIRY: expiry judged by the store's clock means a contender needs no watch of
 *       its own. One that first looks at a lease after the store has let go of a later lease of the same
 *       holder gets it at once (a backend judging by a local watch refuses it for a TTL more), and
 *       one whose monotonic clock runs {@value #FAST_CLOCK_RATE} times too fast still takes nothing
 *       before the TTL (a local watch would end after a quarter of it).</li>
 *   <li>NATIVE_WAIT: a waiter whose poll interval is {@link #NATIVE_WAIT_POLL} gets a released key
 *       less than half of that after the release, so the store woke it.</li>
 * </ul>
 * Both bound nothing tighter than the backend's TTL or tens of seconds, so a loaded machine slows
 * them but does not fail them.
 */
final class CapabilityChecks {
    /** The poll interval of the NATIVE_WAIT waiter: longer than the check waits for its wake-up. */
    static final Duration NATIVE_WAIT_POLL = Duration.ofSeconds(40);
    /** How fast the monotonic clock of the SERVER_SIDE_EXPIRY contender runs. */
    static final int FAST_CLOCK_RATE = 4;
    /** How long the NATIVE_WAIT waiter is left inside acquire before the release, so it has looked once. */
    private static final Duration FIRST_LOOK = Duration.ofMillis(250);

    /** Opens a manager on the backend under test; the contract closes it after the test. */
    interface Managers {
        LockManager open(LockContext context) throws Exception;
    }

    private final TckFixture fx;
    private final Managers managers;
    private final Duration ttl;
    private final Duration poll;
    private final Duration takeoverLimit;

    /**
     * @param ttl           the backend's short TTL
     * @param poll          pause between a contender's tryAcquire calls
     * @param takeoverLimit how long a contender may poll for an abandoned lease
     */
    CapabilityChecks(TckFixture fx, Managers managers, Duration ttl, Duration poll, Duration takeoverLimit) {
        this.fx = fx;
        this.managers = managers;
        this.ttl = ttl;
        this.poll = poll;
        this.takeoverLimit = takeoverLimit;
    }

    /** Both SERVER_SIDE_EXPIRY cases at once (each waits about a TTL); every failing case is reported. */
    void serverSideExpiry(LockManager holder) throws Exception {
        String early = fx.key("sse-earlier");
        String later = fx.key("sse-later");
        String watched = fx.key("sse-fast-clock");
        // written in this order, each after the last returned: the store's clock dates them so
        fx.hold(holder, early, abandoned("earlier"));
        long laterStart = System.nanoTime();
        fx.hold(holder, later, abandoned("later"));
        long watchedStart = System.nanoTime();
        fx.hold(holder, watched, abandoned("watched"));
        LockManager watcher = managers.open(LockContext.defaults());
        LockManager lateLooker = managers.open(LockContext.defaults());
        LockManager fast = managers.open(LockContext.defaults().withTime(new RunningFast(FAST_CLOCK_RATE)));

        List<String> failures = new CopyOnWriteArrayList<>();
        TckFixture.runConcurrently(2, i -> {
            String problem = i == 0 ? lookedOnce(watcher, lateLooker, later, laterStart, early)
                    : fastClock(fast, watched, watchedStart);
            if (problem != null) failures.add(problem);
            return null;
        });
        assertThat(failures).as("SERVER_SIDE_EXPIRY is declared, so expiry must be judged by the store's clock (TTL %s)", ttl)
                .isEmpty();
    }

    /**
     * Once a contender watching {@code later} from the start has been let in, {@code early} — the
     * same holder's lease of the same TTL, written before — has run out by the store's clock too,
     * so a contender that never saw it gets it on its first look.
     */
    private String lookedOnce(LockManager watcher, LockManager lateLooker, String later, long laterStart, String early)
            throws InterruptedException {
        fx.pollUntilAcquired(watcher, later, longLease("watcher"), takeoverLimit, poll);
        long watched = TckFixture.elapsedMillis(laterStart);
        Optional<Lease> first = fx.tryTake(lateLooker, early, longLease("late-looker"));
        if (first.isPresent()) return null;
        return "a contender that first looked at " + TckFixture.show(early) + " (abandoned, TTL " + ttl
                + ") right after the holder's later lease " + TckFixture.show(later) + " had been taken over ("
                + watched + " ms after it was written) was refused: expiry was judged by watching the record for a"
                + " TTL on the contender's own clock, not by the store's clock";
    }

    /** A contender whose monotonic clock runs fast takes the abandoned lease no earlier than its TTL. */
    private String fastClock(LockManager fast, String watched, long watchedStart) throws InterruptedException {
        fx.pollUntilAcquired(fast, watched, longLease("fast-clock"), takeoverLimit, poll);
        long after = System.nanoTime() - watchedStart;
        if (after >= ttl.toNanos()) return null;
        return "a contender whose monotonic clock runs " + FAST_CLOCK_RATE + " times too fast took over "
                + TckFixture.show(watched) + " " + TimeUnit.NANOSECONDS.toMillis(after)
                + " ms after the holder began acquiring it, before its TTL of " + ttl.toMillis()
                + " ms: expiry was judged on the contender's clock, not on the store's";
    }

    /**
     * A waiter on {@code waiterManager} (polling every {@link #NATIVE_WAIT_POLL} at most, see
     * {@link LockManagerContract#newManagerPollingEvery}) that has looked at the held key gets it
     * within half that interval of the release.
     */
    void nativeWait(LockManager holder, LockManager waiterManager) throws Exception {
        String k = fx.key("native-wait");
        Lease held = fx.hold(holder, k, longLease("holder"));
        Duration woken = NATIVE_WAIT_POLL.dividedBy(2);
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            Future<Lease> waiter = one.submit(() -> fx.track(waiterManager.acquire(k, NATIVE_WAIT_POLL.multipliedBy(2),
                    longLease("waiter"))));
            TckFixture.pace(FIRST_LOOK);
            assertThat(waiter.isDone()).as("acquire of %s returned (or threw) while the key was held", TckFixture.show(k))
                    .isFalse();
            long released = System.nanoTime();
            held.release();
            try {
                waiter.get(woken.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("NATIVE_WAIT is declared, but a waiter in acquire(" + TckFixture.show(k)
                        + ") whose poll interval is " + NATIVE_WAIT_POLL.toSeconds() + " s still did not have the key "
                        + TckFixture.elapsedMillis(released) + " ms after its holder released it: the store did not"
                        + " wake it (look at what wakes waiters on a release, and at newManagerPollingEvery)");
            }
        } finally {
            one.shutdownNow();
        }
    }

    private LeaseOptions abandoned(String role) {
        return LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner(fx.owner(role));
    }

    private LeaseOptions longLease(String role) {
        return LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner(fx.owner(role));
    }

    /**
     * The system clocks, except that the monotonic clock runs {@code rate} times as fast from the
     * moment this was made: a contender judging staleness by it sees records age {@code rate} times
     * too fast.
     */
    private static final class RunningFast implements TimeSource {
        private final int rate;
        private final long origin = System.nanoTime();

        RunningFast(int rate) {
            this.rate = rate;
        }

        @Override
        public Instant now() {
            return Instant.now();
        }

        @Override
        public long nanoTime() {
            return origin + rate * (System.nanoTime() - origin);
        }
    }
}
