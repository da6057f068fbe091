package dev.latchkey.tck;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A thread factory for a {@link dev.latchkey.spi.LockContext} that, while it refuses, fails every
 * request the way the JDK fails {@code Thread.start()} at a process's or container's thread limit
 * (a cgroup's pids limit reached by the job's own processes): with
 * {@code OutOfMemoryError("unable to create native thread: …")}. Otherwise it makes daemon threads.
 * It refuses from its creation until {@link #refuseUntil} passes or {@link #stopRefusing} is called;
 * it counts its refusals.
 */
final class RefusingThreads implements ThreadFactory {
    static final String MESSAGE = "unable to create native thread: possibly out of memory or process/resource limits reached";

    private final AtomicInteger made = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private volatile boolean refusing = true;
    private volatile boolean untilSet;
    private volatile long untilNanos;

    @Override
    public Thread newThread(Runnable r) {
        if (refusing && (!untilSet || System.nanoTime() - untilNanos < 0)) {
            refused.incrementAndGet();
            throw new OutOfMemoryError(MESSAGE);
        }
        Thread t = new Thread(r, "tck-threads-" + made.incrementAndGet());
        t.setDaemon(true);
        return t;
    }

    /** Refuses only until {@code nanos} ({@link System#nanoTime()}). */
    void refuseUntil(long nanos) {
        untilNanos = nanos;
        untilSet = true;
    }

    void stopRefusing() {
        refusing = false;
    }

    /** Thread starts refused so far. */
    int refusals() {
        return refused.get();
    }
}
