package dev.latchkey.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * What the leases of one lock manager share: the clocks they read, the renewer threads their
 * store I/O runs on, and where their events go ({@link LockEvents}).
 *
 * <p><b>Isolation.</b> Every manager has renewers of its own, so a store that hangs delays the
 * renewals of that manager's leases only — never those of another manager or another backend in the
 * same JVM. Within a manager, {@code -Dlatchkey.renewalThreads} (default 2) renewals run at once,
 * so one key's slow request does not hold up the others. The deadline timer ({@link Heartbeats}) is
 * shared by the whole JVM and never does I/O: however long a store hangs, every lease's loss is
 * signalled on time.
 *
 * <p>Renewer threads start with the first task and end after 30 s without one, so a manager that
 * holds nothing costs no thread; they are daemons and outlive {@code close()} of the manager for as
 * long as its leases are held.
 */
public final class LeaseRuntime {
    private static final int THREADS = Math.max(1, Integer.getInteger("latchkey.renewalThreads", 2));

    private final TimeSource time;
    private final ThreadPoolExecutor renewers;
    private final LockEvents events;

    private LeaseRuntime(TimeSource time, String label, LockEvents events) {
        this.time = time;
        this.events = events;
        this.renewers = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                Heartbeats.daemonThreads("latchkey-renewer-" + label));
        this.renewers.allowCoreThreadTimeOut(true);
    }

    /**
     * The runtime of one manager.
     *
     * @param label the URI scheme: names the renewer threads and the scheme of events (never a credential)
     */
    public static LeaseRuntime create(LockContext context, String label) {
        Objects.requireNonNull(label, "label");
        return new LeaseRuntime(context.time(), label, new LockEvents(label, context.time(), context.listener().orElse(null)));
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
        Heartbeats.scheduler().schedule(() -> renewers.execute(ioTask), Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    }

    /** Renewer threads alive now (for tests and {@code latchkey bench --hold}). */
    public int threads() {
        return renewers.getPoolSize();
    }
}
