package dev.latchkey.spi;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LockListener;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The events of one manager's leases: logged, and handed to the manager's {@link LockListener}.
 * {@link ManagedLease} reports acquisitions, renewals, losses and releases itself; a manager
 * reports only {@link #busy} (a key found held), and the store's own waits ({@link #storeWait},
 * {@link #storeWaitBegan}).
 *
 * <p><b>Guarantee.</b> Reporting an event never blocks and never throws, whatever the listener
 * does: it queues the event (at most {@value #QUEUE} waiting; beyond that it is dropped and the drop
 * logged) for one event thread of this manager, which calls the listener outside every lock of the
 * lease, in the order the events were reported, and logs what the listener throws. So heartbeats,
 * deadlines and releases, which report from the timer, renewer and caller threads, never wait for a
 * listener. The event thread starts with the first event; it stays while the manager holds a lease
 * and ends 30 s after the last event once it holds none; a manager without a listener has none. An
 * event that finds no event thread and cannot start one (the process is at its thread limit) is
 * dropped like one that finds the queue full: the lease that reported it carries on regardless.
 *
 * <p><b>Logging</b> (logger {@code dev.latchkey.events}, through {@link System.Logger}): lost at
 * WARNING, and so is the start of a store-side wait (once per wait); a failed renewal and an unconfirmed release at INFO; acquired, busy and released at
 * DEBUG, and so is each acquisition a store-side wait refused; renewed at TRACE. Messages name the scheme and the key, never a credential.
 */
public final class LockEvents {
    private static final System.Logger LOG = System.getLogger("dev.latchkey.events");
    private static final int QUEUE = 1024;

    private final String scheme;
    private final TimeSource time;
    private final LockListener listener;  // null: log only
    private final ThreadPoolExecutor thread; // null without a listener
    private final AtomicLong dropped = new AtomicLong();

    LockEvents(String scheme, TimeSource time, LockListener listener, ThreadFactory threads) {
        this.scheme = scheme;
        this.time = time;
        this.listener = listener;
        if (listener == null) {
            this.thread = null;
        } else {
            this.thread = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE),
                    threads);
            this.thread.allowCoreThreadTimeOut(true);
        }
    }

    /** Under the runtime's lock: whether an idle event thread stays (a lease is held) or ends after 30 s. */
    void keepIdleThread(boolean keep) {
        if (thread != null) thread.allowCoreThreadTimeOut(!keep);
    }

    /** {@code tryAcquire} found {@code key} held, or {@code acquire} gave up; the call began at {@code calledNanos}. */
    public void busy(String key, long calledNanos) {
        Duration waited = since(calledNanos);
        log(Level.DEBUG, "busy", key, () -> "waited " + waited.toMillis() + " ms");
        deliver(l -> l.busy(scheme, key, waited));
    }

    /**
     * The store itself refused {@code key} (not a holder): a wait of its own, named by {@code reason},
     * keeps it busy until about {@code until}. Report it after {@link #busy}, once per refused call.
     */
    public void storeWait(String key, String reason, Instant until) {
        log(Level.DEBUG, "kept busy by the store", key, () -> "(" + reason + ") until " + until);
        deliver(l -> l.storeWait(scheme, key, reason, until));
    }

    /**
     * A store-side wait began that keeps keys busy until about {@code until}: one WARNING line naming
     * {@code reason} and {@code why} (no credential). The caller reports each wait once, when it first
     * sees it, not per acquisition.
     */
    public void storeWaitBegan(String reason, Instant until, String why) {
        LOG.log(Level.WARNING, scheme + " store wait (" + reason + "): keys are kept busy until " + until + ": " + why);
    }

    void acquired(String key, Duration latency) {
        log(Level.DEBUG, "acquired", key, () -> "in " + latency.toMillis() + " ms");
        deliver(l -> l.acquired(scheme, key, latency));
    }

    void renewed(String key, Duration validFor) {
        log(Level.TRACE, "renewed", key, () -> "valid for " + validFor.toMillis() + " ms");
        deliver(l -> l.renewed(scheme, key, validFor));
    }

    void renewalFailed(String key, Duration validLeft, RuntimeException error) {
        log(Level.INFO, "renewal failed", key, () -> "valid for " + Math.max(0, validLeft.toMillis())
                + " ms more, retrying: " + error.getMessage());
        deliver(l -> l.renewalFailed(scheme, key, validLeft, error));
    }

    void lost(String key, Duration held, LeaseLostException cause) {
        log(Level.WARNING, "lost", key, () -> cause.reason() + " after " + held.toMillis() + " ms: " + cause.getMessage());
        deliver(l -> l.lost(scheme, key, held, cause));
    }

    void released(String key, Duration held, boolean confirmed) {
        log(confirmed ? Level.DEBUG : Level.INFO, "released", key, () -> "after " + held.toMillis() + " ms"
                + (confirmed ? "" : " (the store did not confirm it; the key frees by its TTL at the latest)"));
        deliver(l -> l.released(scheme, key, held, confirmed));
    }

    /** From {@code startNanos} ({@link TimeSource#nanoTime()}) to now. */
    Duration since(long startNanos) {
        return Duration.ofNanos(Math.max(0, time.nanoTime() - startNanos));
    }

    private void log(Level level, String event, String key, Supplier<String> detail) {
        if (LOG.isLoggable(level)) LOG.log(level, scheme + " lock '" + key + "' " + event + " " + detail.get());
    }

    private void deliver(Consumer<LockListener> call) {
        if (thread == null) return;
        try {
            thread.execute(() -> {
                try {
                    call.accept(listener);
                } catch (RuntimeException | Error e) { // an Error too: the event thread must not end with it
                    LOG.log(Level.WARNING, "lock listener " + listener.getClass().getName() + " threw; it is called"
                            + " again for the next event", e);
                }
            });
        } catch (RejectedExecutionException e) {
            dropped("lock listener " + listener.getClass().getName() + " is too slow", QUEUE + " were waiting");
        } catch (RuntimeException | Error e) {
            // no event thread, and none could be started: the reporting lease must not fail for it
            dropped("no thread to call lock listener " + listener.getClass().getName() + " could be started", e.toString());
        }
    }

    private void dropped(String why, String detail) {
        long n = dropped.incrementAndGet();
        if (n == 1 || n % 1000 == 0) {
            LOG.log(Level.WARNING, why + ": " + n + " events of " + scheme + " locks dropped so far (" + detail + ")");
        }
    }
}
