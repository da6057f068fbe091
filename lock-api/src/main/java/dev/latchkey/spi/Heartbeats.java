package dev.latchkey.spi;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one timer thread that watches every lease of the JVM, however many are held (10,000 leases
 * cost 10,000 small scheduled tasks, not threads), except those of managers whose
 * {@link LockContext#withScheduler context} names a timer of the application's. It only checks deadlines and hands due renewals
 * to the renewers of the lease's own manager ({@link LeaseRuntime}); it never does I/O, so a lease's
 * loss is signalled on time even while its store hangs.
 *
 * <p>Loading this class starts no thread: the timer, with its once-a-second keep-alive tick, starts
 * on the first {@link #scheduler()} call. A lease is handed out only once the timer thread runs
 * ({@link #running()}); from then on it needs no other thread, and it never dies: its tasks' errors
 * stay in their futures, and lease tasks throw none.
 */
public final class Heartbeats {
    private static volatile boolean running;

    private Heartbeats() {}

    /**
     * Holds the timer, so that it and its keep-alive tick are created on the first
     * {@link #scheduler()} call rather than when {@link Heartbeats} loads. Class initialisation
     * makes this thread-safe and once-only, and the tick is queued before any caller can schedule
     * a task, so no lease task is ever the queue's head.
     */
    private static final class TimerHolder {
        static final ScheduledThreadPoolExecutor TIMER = timer();
    }

    /** The timer thread: deadlines and hand-offs only; never block on it. */
    public static ScheduledThreadPoolExecutor scheduler() {
        return TimerHolder.TIMER;
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, daemonThreads("latchkey-heartbeat-timer"));
        executor.setRemoveOnCancelPolicy(true);
        // A task that becomes the queue's head wakes the timer thread (a futex call, 5-20 us on the
        // acquire path). This no-op keeps a head at most a second away, so a lease's tasks, due
        // later than that, join the queue without waking anyone; the price is one wake-up a second.
        try {
            executor.scheduleAtFixedRate(() -> {}, 1, 1, TimeUnit.SECONDS);
        } catch (RuntimeException | Error e) {
            // the tick is queued before the thread starts: the next schedule call starts the thread
            // (a failure here must not break this class for the JVM's lifetime)
        }
        return executor;
    }

    /**
     * Starts the timer thread unless it runs; false if it could not be started (the process is at
     * its thread limit). Cheap once it runs.
     */
    static boolean running() {
        if (running) return true;
        ScheduledThreadPoolExecutor timer = scheduler();
        try {
            timer.prestartCoreThread();
        } catch (RuntimeException | Error e) {
            return false;
        }
        running = timer.getPoolSize() > 0;
        return running;
    }

    /** Daemon threads named {@code name-1}, {@code name-2}, … */
    static ThreadFactory daemonThreads(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
