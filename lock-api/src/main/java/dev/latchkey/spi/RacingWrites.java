package dev.latchkey.spi;

import dev.latchkey.LockBackendException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Several attempts at one conditional write, sent at once, and how many of them won: the step of a
 * {@link StoreProbe} that tells a store whose conditions are atomic from one that checks a condition
 * and then writes (two racing creates of one object, or two racing replaces of one version, can both
 * land there, although each alone is refused correctly).
 *
 * <p><b>Guarantee.</b> {@link #race} returns only once every attempt has ended, with the number that
 * reported a landed write; an attempt that threw counts as lost (a loser's 409 or 500 is how some
 * atomic stores refuse a racing write) and its exception is kept. Each attempt runs on a thread of its
 * own, started and waiting before any is released, so the writes overlap as closely as the machine
 * allows; whether a non-atomic store is caught in one race is a matter of chance, which the caller
 * sizes by the number of attempts and races. An attempt still running at {@code bound} fails the race
 * with a retriable {@link LockBackendException}: the store is slow, not shown to be non-atomic.
 */
public final class RacingWrites {
    /** How long {@link Attempt#write}'s {@code together} waits for the other attempts before going on alone. */
    private static final Duration TOGETHER_BOUND = Duration.ofSeconds(1);

    /** One attempt of a race. */
    @FunctionalInterface
    public interface Attempt {
        /**
         * Sends attempt {@code index}'s write.
         *
         * @param together waits until every attempt still running has called it as often (at most a
         *                 second): a write that calls it between sending its request's head and its body
         *                 lets every racer's head reach the store before any body does
         * @return whether the write landed
         */
        boolean write(int index, Runnable together);
    }

    /**
     * What one race came to.
     *
     * @param attempts attempts sent
     * @param won      attempts that reported their write landed
     * @param failed   the exceptions of attempts that threw (counted as lost)
     */
    public record Outcome(int attempts, int won, List<RuntimeException> failed) {
        public Outcome {
            failed = List.copyOf(failed);
        }
    }

    private RacingWrites() {}

    /**
     * Runs {@code attempt.write(i, together)} for each {@code i} in {@code 0..attempts-1} at once,
     * each on a daemon thread of its own.
     *
     * @throws LockBackendException (retriable) if an attempt is still running at {@code bound}, or the
     *                              caller is interrupted (its interrupt status is kept)
     */
    public static Outcome race(int attempts, Attempt attempt, Duration bound) {
        if (attempts < 2) throw new IllegalArgumentException("a race needs two attempts or more: " + attempts);
        // the phaser's first phase is the start; each later one a "together" of the attempts still running
        Phaser phaser = new Phaser(attempts + 1);
        Runnable together = () -> {
            try {
                phaser.awaitAdvanceInterruptibly(phaser.arrive(), TOGETHER_BOUND.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (TimeoutException e) {
                // an attempt is slow or took another path: this one goes on alone rather than waiting for it
            }
        };
        AtomicInteger won = new AtomicInteger();
        ConcurrentLinkedQueue<RuntimeException> failed = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>(attempts);
        for (int i = 0; i < attempts; i++) {
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    phaser.awaitAdvanceInterruptibly(phaser.arrive());
                    if (attempt.write(index, together)) won.incrementAndGet();
                } catch (InterruptedException e) {
                    failed.add(new LockBackendException("racing write " + index + " was interrupted", true, e));
                } catch (RuntimeException e) {
                    failed.add(e);
                } finally {
                    phaser.arriveAndDeregister();
                }
            }, "latchkey-racing-write-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        try {
            threads.forEach(Thread::start);
            // the caller's arrival completes the start once every thread is running and parked on it
            phaser.arriveAndDeregister();
            long deadline = System.nanoTime() + bound.toNanos();
            for (Thread t : threads) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !joined(t, left)) {
                    throw new LockBackendException("racing writes still running after " + bound.toMillis() + " ms", true);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while racing writes", true, e);
        } finally {
            threads.forEach(Thread::interrupt);
        }
        return new Outcome(attempts, won.get(), List.copyOf(failed));
    }

    private static boolean joined(Thread t, long nanos) throws InterruptedException {
        t.join(TimeUnit.NANOSECONDS.toMillis(nanos) + 1);
        return !t.isAlive();
    }
}
