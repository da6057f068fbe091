package dev.latchkey.spi;

import dev.latchkey.LockListener;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;

/**
 * What a provider gets besides the URI: the clocks to use, the manager's {@link LockListener}, and
 * the application's threads if it wants its own used. Immutable; defaults suit production (system
 * clocks, no listener, the library's own daemon threads).
 * <pre>{@code
 * LockManager locks = Latchkey.open(uri, LockContext.defaults().withListener(myListener));
 * }</pre>
 */
public final class LockContext {
    private static final LockContext DEFAULT = new LockContext(TimeSource.system(), null, null, null);

    private final TimeSource time;
    private final LockListener listener;         // null = none
    private final ThreadFactory threads;         // null = the library's named daemon threads
    private final ScheduledExecutorService timer; // null = the JVM-wide Heartbeats timer

    private LockContext(TimeSource time, LockListener listener, ThreadFactory threads, ScheduledExecutorService timer) {
        this.time = time;
        this.listener = listener;
        this.threads = threads;
        this.timer = timer;
    }

    public static LockContext defaults() {
        return DEFAULT;
    }

    public LockContext withTime(TimeSource time) {
        return new LockContext(Objects.requireNonNull(time, "time"), listener, threads, timer);
    }

    /**
     * The one listener of the managers opened with this context (replacing any set before; to
     * reach several, fan out in your own listener). See {@link LockListener} for how it is called.
     */
    public LockContext withListener(LockListener listener) {
        return new LockContext(time, Objects.requireNonNull(listener, "listener"), threads, timer);
    }

    /**
     * Where the managers opened with this context get the threads they start: the renewers that
     * run heartbeats and background releases, the thread that calls the listener, and a backend's
     * own (PostgreSQL's release listener). Pass {@code Thread.ofVirtual().name("locks-", 0).factory()}
     * for virtual threads, or a factory of your own for names, priorities or context propagation.
     * A manager keeps its renewers and event thread while it holds a lease and lets idle ones end
     * by themselves once it holds none (after 30 s without work); threads that are not daemons
     * keep the JVM alive until then, so the factory's threads are best daemons or
     * virtual. Default: the library's daemon threads, named {@code latchkey-renewer-SCHEME-N} and
     * {@code latchkey-events-SCHEME-N}. A factory that throws (as the JDK does at a thread limit)
     * costs renewals, which are retried, never a lease's deadline: a lease no renewal reaches is
     * lost as {@link dev.latchkey.LeaseLostException.Reason#NO_RENEWER_THREAD}.
     */
    public LockContext withThreadFactory(ThreadFactory threads) {
        return new LockContext(time, listener, Objects.requireNonNull(threads, "threads"), timer);
    }

    /**
     * The timer that the leases of managers opened with this context schedule their deadlines and
     * heartbeats on, instead of the JVM-wide one ({@link Heartbeats}). Its tasks never block: they
     * check a deadline, signal a loss, or hand a renewal to a renewer thread. A timer busy with other
     * work delays those checks, and with them the signal of a loss, so give it its own thread or keep
     * its other tasks short.
     *
     * <p><b>Ownership.</b> The application owns the timer: closing a manager does not shut it down,
     * and no lease ever does. Shut it down only after every manager using it is closed and their
     * leases released; a lease whose timer refuses its tasks is still invalid after its deadline
     * ({@code isValid()}), but its loss listeners are no longer called on time.
     */
    public LockContext withScheduler(ScheduledExecutorService timer) {
        return new LockContext(time, listener, threads, Objects.requireNonNull(timer, "timer"));
    }

    public TimeSource time() {
        return time;
    }

    public Optional<LockListener> listener() {
        return Optional.ofNullable(listener);
    }

    /** The application's thread factory, if it passed one ({@link #withThreadFactory}). */
    public Optional<ThreadFactory> threadFactory() {
        return Optional.ofNullable(threads);
    }

    /** The application's timer, if it passed one ({@link #withScheduler}). */
    public Optional<ScheduledExecutorService> scheduler() {
        return Optional.ofNullable(timer);
    }
}
