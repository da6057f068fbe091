package dev.latchkey.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * What the leases of one lock manager share: the clocks they read, the renewer threads their
 * store I/O runs on, and where their events go ({@link LockEvents}).
 *
 * <p><b>Isolation.</b> Every manager has renewers of its own, so a store that hangs delays the
 * renewals of that manager's leases only — never those of another manager or another backend in the
 * same JVM. Within a manager, {@code -Dlatchkey.renewalThreads} (default 2) renewals run at once,
 * so one key's slow request does not hold up the others. The deadline timer ({@link Heartbeats}, or
 * the application's) is shared by many managers and never does I/O: however long a store hangs, every lease's loss is
 * signalled on time.
 *
 * <p>Renewer threads start with the first task and end after 30 s without one, so a manager that
 * holds nothing costs no thread; they are daemons and outlive {@code close()} of the manager for as
 * long as its leases are held.
 *
 * <p><b>The application's threads.</b> Every thread a manager starts comes from
 * {@link #threads(String)}: the context's {@link LockContext#withThreadFactory thread factory} if
 * the application passed one, else named daemon threads. Deadlines and heartbeats are scheduled on
 * {@link #scheduler()}: the context's {@link LockContext#withScheduler timer} if passed (owned by
 * the application, never shut down here), else the JVM-wide {@link Heartbeats} timer.
 */
public final class LeaseRuntime {
    private static final int THREADS = Math.max(1, Integer.getInteger("latchkey.renewalThreads", 2));

    private final TimeSource time;
    private final String label;
    private final ThreadFactory applicationThreads; // null: our named daemons
    private final ScheduledExecutorService applicationTimer; // null: the JVM's, started on first use
    private final ThreadPoolExecutor renewers;
    private final LockEvents events;

    private LeaseRuntime(LockContext context, String label) {
        this.time = context.time();
        this.label = label;
        this.applicationThreads = context.threadFactory().orElse(null);
        this.applicationTimer = context.scheduler().orElse(null);
        this.events = new LockEvents(label, time, context.listener().orElse(null), threads("events"));
        this.renewers = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                threads("renewer"));
        this.renewers.allowCoreThreadTimeOut(true);
    }

    /**
     * The runtime of one manager.
     *
     * @param label the URI scheme: names the renewer threads and the scheme of events (never a credential)
     */
    public static LeaseRuntime create(LockContext context, String label) {
        Objects.requireNonNull(label, "label");
        return new LeaseRuntime(context, label);
    }

    /**
     * Where this manager's threads for {@code purpose} come from: the application's factory, or
     * daemon threads named {@code latchkey-PURPOSE-SCHEME-N}.
     */
    public ThreadFactory threads(String purpose) {
        return applicationThreads != null ? applicationThreads : Heartbeats.daemonThreads("latchkey-" + purpose + "-" + label);
    }

    /** The timer of this manager's leases: deadlines and hand-offs only, never block on it. */
    public ScheduledExecutorService scheduler() {
        return applicationTimer != null ? applicationTimer : Heartbeats.scheduler();
    }

    public TimeSource time() {
        return time;
    }

    /** Where this manager's lease events go; a manager reports {@link LockEvents#busy} there. */
    public LockEvents events() {
        return events;
    }

    /** Runs {@code ioTask} on one of this manager's renewers. */
    public void execute(Runnable ioTask) {
        renewers.execute(ioTask);
    }

    /** Runs {@code ioTask} on a renewer after {@code delay} (the timer itself must not block). */
    public void later(Duration delay, Runnable ioTask) {
        scheduler().schedule(() -> renewers.execute(ioTask), Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    }

    /** Renewer threads alive now (for tests and {@code latchkey bench --hold}). */
    public int threads() {
        return renewers.getPoolSize();
    }
}
