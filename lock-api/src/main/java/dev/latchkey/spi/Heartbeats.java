package dev.latchkey.spi;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The two threads that keep every lease of the JVM alive, however many leases are held (10,000
 * leases cost 10,000 small scheduled tasks, not threads):
 * <ul>
 *   <li>the <em>timer</em> ({@link #scheduler()}) only checks deadlines and hands due renewals on —
 *       it never does I/O, so a lease's loss is signalled on time even while a store hangs;</li>
 *   <li>the <em>renewer</em> ({@link #renewals()}) runs the renewals, one store round trip each, in
 *       turn. A hanging store delays other leases' renewals by up to its request timeout, so keep
 *       backend timeouts well under TTL/5. Set {@code -Dlatchkey.renewalThreads=N} for more.</li>
 * </ul>
 * Loading this class starts no thread: the renewer starts with its first task, and the timer,
 * with its once-a-second keep-alive tick, on the first {@link #scheduler()} or {@link #later} call.
 */
public final class Heartbeats {
    private static final ExecutorService RENEWALS = renewer(Integer.getInteger("latchkey.renewalThreads", 1));

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

    /** Where renewals (store I/O) run. */
    public static ExecutorService renewals() {
        return RENEWALS;
    }

    /** Runs {@code ioTask} on the renewer after {@code delay} (timer tasks themselves must not block). */
    public static void later(java.time.Duration delay, Runnable ioTask) {
        scheduler().schedule(() -> RENEWALS.execute(ioTask), delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, daemon("latchkey-heartbeat-timer"));
        executor.setRemoveOnCancelPolicy(true);
        // A task that becomes the queue's head wakes the timer thread (a futex call, 5-20 us on the
        // acquire path). This no-op keeps a head at most a second away, so a lease's tasks, due
        // later than that, join the queue without waking anyone; the price is one wake-up a second.
        executor.scheduleAtFixedRate(() -> {}, 1, 1, TimeUnit.SECONDS);
        return executor;
    }

    private static ExecutorService renewer(int threads) {
        int n = Math.max(1, threads);
        return new ThreadPoolExecutor(n, n, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), daemon("latchkey-heartbeat-renewer"));
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
