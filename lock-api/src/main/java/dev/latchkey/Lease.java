package dev.latchkey;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * Proof of holding a lock, for a bounded time. Thread-safe.
 *
 * <p><b>Guarantee.</b> While {@link #isValid()} is true, no other lease on this key is valid
 * anywhere. Validity is judged on this process's monotonic clock with a safety margin: the lease
 * turns invalid (and {@link #onLost} listeners fire) a margin <em>before</em> the store could let
 * someone else in. A paused process (GC, suspended VM) can still outlive its lease without
 * noticing; protect the resource with the {@link #fencingToken()} where that matters.
 *
 * <p>{@link #close()} releases; releasing a lease that was lost or broken raises
 * {@link LeaseLostException} and leaves the current holder untouched.
 */
public interface Lease extends AutoCloseable {

    String key();

    /** Random id of this acquisition. */
    String leaseId();

    String owner();

    /**
     * Strictly greater than the token of every earlier acquisition of this key, where the backend
     * declares {@link Capability#FENCING_TOKENS}; 0 otherwise. Pass it to the protected resource
     * and have it reject writes carrying a smaller token than one it has seen.
     */
    long fencingToken();

    Instant acquiredAt();

    /** When the lease ends unless renewed (this process's wall clock; informational). */
    Instant expiresAt();

    Duration ttl();

    /** True while held: not released, not lost, and not past the local validity deadline. */
    boolean isValid();

    /**
     * Extends the lease by its TTL from now.
     *
     * @throws LeaseLostException    the lease was lost, broken or taken over
     * @throws LockBackendException  the store could not be reached; the lease stays valid until its deadline
     */
    void renew();

    /**
     * Gives the lock up. Idempotent once it has succeeded.
     *
     * @throws LeaseLostException the lease had already been lost; the current holder is not disturbed
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    void close();

    /**
     * Calls {@code listener} once if this lease is lost (renewal failed past the safety margin,
     * broken, taken over) — not when it is released. Runs on the heartbeat thread, or at once if
     * the lease is already lost; keep it short.
     */
    void onLost(Consumer<? super LeaseLostException> listener);

    /** This lease as a {@link LockInfo}. */
    LockInfo info();
}
