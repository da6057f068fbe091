package dev.latchkey.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Throughput under contention: T threads, each taking a key of K at random, a round at a time, for
 * a fixed time; the same loop for the lock and for every baseline that {@linkplain Baseline#hasSpread
 * spreads}, so their rates can be divided. A round that finds its key taken counts as busy, not as
 * done. The first failure of any thread fails the measurement, naming it.
 */
final class Contention {

    /** One thread's round on key {@code key}: true when it took and gave back the key, false when it found it taken. */
    interface Round {
        boolean run(int key) throws Exception;
    }

    /** Rounds done and found busy in one measurement. */
    record Count(long done, long busy) {
        double busyPercent() {
            return done + busy == 0 ? 0.0 : 100.0 * busy / (done + busy);
        }
    }

    private Contention() {}

    /** Runs one thread per element of {@code rounds} over {@code keys} keys for {@code time}. */
    static Count run(String what, List<Round> rounds, int keys, Duration time) throws InterruptedException {
        LongAdder done = new LongAdder();
        LongAdder busy = new LongAdder();
        ReentrantLock failuresLock = new ReentrantLock();
        List<Throwable> failures = new ArrayList<>(); // added to under failuresLock; read after every join
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        long[] end = new long[1];
        for (int t = 0; t < rounds.size(); t++) {
            Round round = rounds.get(t);
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    long mine = 0;
                    long missed = 0;
                    while (System.nanoTime() < end[0]) {
                        if (round.run(random.nextInt(keys))) mine++;
                        else missed++;
                    }
                    done.add(mine);
                    busy.add(missed);
                } catch (Throwable e) {
                    failuresLock.lock();
                    try {
                        failures.add(e);
                    } finally {
                        failuresLock.unlock();
                    }
                }
            }, "latchkey-bench-" + t);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        end[0] = System.nanoTime() + time.toNanos(); // published to the workers by go.countDown()
        go.countDown();
        for (Thread thread : threads) thread.join();
        if (!failures.isEmpty()) {
            Throwable first = failures.get(0);
            throw new IllegalStateException(what + " under contention failed: " + first, first);
        }
        return new Count(done.sum(), busy.sum());
    }
}
