package dev.latchkey.spi;

import dev.latchkey.LockBackendException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

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
 * <p><b>Threads of a held lease.</b> Renewer threads start when the manager's first lease is held
 * (and, failing that, at each heartbeat) and stay while any of its leases is held, so a heartbeat
 * never needs a new thread: a process at its thread limit (a job forking up to its cgroup's pids
 * limit) keeps renewing. Once the manager holds nothing, idle renewers end within a minute, so a
 * manager that holds nothing costs no thread. They are daemons and outlive {@code close()} of the
 * manager for as long as its leases are held. A thread that cannot be started is logged once per
 * episode; a heartbeat it costs counts as a failed renewal, and a lease that no renewal reached by
 * its deadline is lost as {@link dev.latchkey.LeaseLostException.Reason#NO_RENEWER_THREAD} — on
 * the timer, which started before the lease was handed out and never needs another thread.
 *
 * <p><b>The application's threads.</b> Every thread a manager starts comes from
 * {@link #threads(String)}: the context's {@link LockContext#withThreadFactory thread factory} if
 * the application passed one, else named daemon threads. Deadlines and heartbeats are scheduled on
 * {@link #scheduler()}: the context's {@link LockContext#withScheduler timer} if passed (owned by
 * the application, never shut down here), else the JVM-wide {@link Heartbeats} timer.
 */
public final class LeaseRuntime {
    private static final System.Logger LOG = System.getLogger(LeaseRuntime.class.getName());
    private static final int THREADS = Math.max(1, Integer.getInteger("latchkey.renewalThreads", 2));
    /** How long an idle renewer (or events thread) lives once no lease is held, and how long after the last one ended that begins. */
    private static final long IDLE_SECONDS = 30;
    private static final Duration HAND_OFF_RETRY = Duration.ofSeconds(1);

    private final TimeSource time;
    private final String label;
    private final ThreadFactory applicationThreads; // null: our named daemons
    private final ScheduledExecutorService applicationTimer; // null: the JVM's, started on first use
    private final ThreadPoolExecutor renewers;
    private final LockEvents events;
    /** Leases of this manager that are held. */
    private final AtomicInteger held = new AtomicInteger();
    /** Guards switching idle threads between kept and ending, and the field below. */
    private final ReentrantLock keepAlive = new ReentrantLock();
    private boolean idleCheckPending;
    /** A thread start failed and was logged; a later hand-off that works ends the episode. */
    private final AtomicBoolean startFailing = new AtomicBoolean();

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

    /**
     * Runs {@code ioTask} on one of this manager's renewers.
     *
     * @throws LockBackendException (retriable) no renewer runs and none could be started (the
     *         process is at its thread limit, or the application's thread factory refused); logged
     *         once per episode
     */
    public void execute(Runnable ioTask) {
        try {
            renewers.execute(ioTask);
        } catch (RuntimeException | Error e) {
            // execute tries to start a thread before queueing while fewer than THREADS run; one that runs can take it
            if (renewers.getPoolSize() > 0 && renewers.getQueue().offer(ioTask)) return;
            threadStartFailed(e);
            throw new LockBackendException("could not start a renewer thread for " + label + " locks: " + e
                    + " (the process or its container may be at its thread limit: ulimit -u, a cgroup's pids.max)", true, e);
        }
        if (startFailing.get()) startFailing.set(false);
    }

    /**
     * Runs {@code ioTask} on a renewer after {@code delay} (the timer itself must not block); while no
     * renewer can be started, the hand-off is tried again every second.
     */
    public void later(Duration delay, Runnable ioTask) {
        scheduler().schedule(() -> {
            try {
                execute(ioTask);
            } catch (LockBackendException e) {
                later(HAND_OFF_RETRY, ioTask);
            }
        }, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    }

    /**
     * A lease of this manager is held from now on, before it is handed out: idle renewers and the
     * events thread stop ending, and the renewers start now if they can (if not, the failure is
     * logged and the lease's heartbeat tries again).
     */
    void leaseHeld() {
        if (held.getAndIncrement() == 0) {
            keepAlive.lock();
            try {
                keepIdleThreads(true);
            } finally {
                keepAlive.unlock();
            }
        }
        try {
            renewers.prestartAllCoreThreads(); // starts none once they run
        } catch (RuntimeException | Error e) {
            threadStartFailed(e);
        }
    }

    /**
     * A lease of this manager ended (lost or released). Once none is held, idle threads may end
     * again — {@value #IDLE_SECONDS} s later, so that a manager taking one lease at a time does not
     * wake its idle threads at every release.
     */
    void leaseEnded() {
        if (held.decrementAndGet() != 0) return;
        keepAlive.lock();
        try {
            if (idleCheckPending) return;
            idleCheckPending = true;
        } finally {
            keepAlive.unlock();
        }
        try {
            scheduler().schedule(this::letIdleThreadsEnd, IDLE_SECONDS, TimeUnit.SECONDS);
        } catch (RuntimeException | Error e) {
            letIdleThreadsEnd(); // the application's timer is shut down: at once, then
        }
    }

    /** On the timer: unless a lease is held again, idle threads end from now on. */
    private void letIdleThreadsEnd() {
        keepAlive.lock();
        try {
            idleCheckPending = false;
            if (held.get() == 0) keepIdleThreads(false);
        } finally {
            keepAlive.unlock();
        }
    }

    /** Under {@code keepAlive}. */
    private void keepIdleThreads(boolean keep) {
        renewers.allowCoreThreadTimeOut(!keep);
        events.keepIdleThread(keep);
    }

    /** True once the timer of this manager's leases runs (an application's timer is the application's to run). */
    boolean timerRunning() {
        return applicationTimer != null || Heartbeats.running();
    }

    private void threadStartFailed(Throwable e) {
        if (startFailing.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "could not start a renewer thread for " + label + " locks (" + e + "): the process or"
                    + " its container may be at its thread limit (ulimit -u, a cgroup's pids.max). Heartbeats retry;"
                    + " a lease no renewal reaches by its deadline is lost (NO_RENEWER_THREAD). Logged once until"
                    + " renewers start again.");
        }
    }

    /** Renewer threads alive now (for tests and {@code latchkey bench --hold}). */
    public int threads() {
        return renewers.getPoolSize();
    }
}
