package dev.latchkey;

import java.time.Duration;
import java.time.Instant;

/**
 * What happens to the leases of one {@link LockManager}: register one per manager with
 * {@link dev.latchkey.spi.LockContext#withListener(LockListener)} when opening it
 * ({@link Latchkey#open(String, dev.latchkey.spi.LockContext)}). Every method has an empty default,
 * so a listener overrides only what it needs. {@code scheme} is the backend's URI scheme (e.g.
 * {@code postgres}, {@code s3}); durations are measured on the monotonic clock.
 *
 * <p><b>Delivery.</b> Calls come on one event thread of the manager, in the order the events
 * happened, never on a caller's, heartbeat or renewer thread and never while the lease holds any
 * lock of its own. Handing events over never blocks: they wait in a bounded queue (1,024 events),
 * and when a listener is so slow that the queue is full, further events are dropped (and the drop is
 * logged) rather than delaying a lease. A listener that throws is logged and called again for the
 * next event. So no listener — slow, blocking or throwing — can delay or break a lease, a renewal
 * or a release; the price is that a listener learns of an event a little after it happened. To act
 * on a loss at once, use {@link Lease#onLost}.
 */
public interface LockListener {

    /**
     * A lease was granted. {@code latency}: from sending the request that won to the grant (for
     * {@code acquire}, the last attempt only, not the time spent waiting before it).
     */
    default void acquired(String scheme, String key, Duration latency) {}

    /** {@code tryAcquire} found the key held, or {@code acquire} gave up after {@code waited}. */
    default void busy(String scheme, String key, Duration waited) {}

    /**
     * The store itself keeps {@code key} busy until about {@code until} (its wall clock, informational),
     * whoever asks: not a holder, but a wait of the store's own, named by {@code reason} — for
     * PostgreSQL's advisory mode {@code restart-guard}: the server restarted, and a lease from before
     * may still be valid on a client that has not noticed. Reported, after {@link #busy}, for each
     * acquisition the wait refused; the manager logs one WARNING when such a wait begins.
     */
    default void storeWait(String scheme, String key, String reason, Instant until) {}

    /** A renewal landed; the lease is valid for {@code validFor} more (TTL − safety margin). */
    default void renewed(String scheme, String key, Duration validFor) {}

    /**
     * A renewal did not land (the store failed or did not answer); it is retried while
     * {@code validLeft} remains, after which the lease is lost with
     * {@link LeaseLostException.Reason#STORE_UNREACHABLE}.
     */
    default void renewalFailed(String scheme, String key, Duration validLeft, RuntimeException error) {}

    /** The lease was lost after being held for {@code held}; {@code cause.reason()} says why. */
    default void lost(String scheme, String key, Duration held, LeaseLostException cause) {}

    /**
     * The holder released the lease after holding it for {@code held}. {@code confirmed} is false
     * when the store did not confirm the release: the lease ended locally all the same, and the key
     * frees by its TTL at the latest.
     */
    default void released(String scheme, String key, Duration held, boolean confirmed) {}
}
