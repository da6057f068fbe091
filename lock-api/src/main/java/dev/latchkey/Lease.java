package dev.latchkey;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * Proof of holding a lock, for a bounded time. Thread-safe.
 *
 * <p><b>Guarantee.</b> While {@link #isValid()} is true, no other lease on this key is valid
 * anywhere. Validity is judged on this process's monotonic clock with a safety margin (TTL/5): it
 * counts from the moment the last store write <em>known to have landed</em> was <em>sent</em> — the
 * acquisition, or a renewal the store confirmed — and ends a margin before the store could let
 * anyone else in, when the {@link #onLost} listeners fire. A renewal whose outcome is unknown (a
 * timeout, a lost reply, a "conflict" answer) extends nothing; one found later to have landed
 * counts from its own send time. A lease that would be invalid on arrival (a claim slower than
 * TTL − margin) is never handed out.
 *
 * <p><b>Residual windows.</b> A paused process (GC, suspended VM) can outlive its lease without
 * noticing: protect the resource with the {@link #fencingToken()} where that matters. And
 * {@link LockManager#forceRelease} lets the next holder in at once; the broken lease learns of it
 * at its next heartbeat (on PostgreSQL advisory mode within about a quarter of a second, when its
 * session ends), and its loss reason is {@link LeaseLostException.Reason#BROKEN} or
 * {@link LeaseLostException.Reason#SESSION_ENDED}.
 *
 * <p>{@link #close()} releases; releasing a lease that was lost or broken raises
 * {@link LeaseLostException} and leaves the current holder untouched. A release the store does not
 * confirm ends the lease locally all the same (renewals stop, so the key frees by its TTL at the
 * latest; the release is retried in the background) and raises {@link LockBackendException}.
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
     * Extends the lease by {@code ttl} from now, and makes {@code ttl} its TTL: later renewals, the
     * heartbeat's included, hold the key for {@code ttl} too, and {@link #ttl()} returns it. Longer
     * or shorter than the TTL the lease was taken with: after a shorter one, the key frees that much
     * sooner if the lease is not renewed again (this process counts the lease valid for the shorter
     * TTL from the call on, whatever becomes of the write). {@code renew(ttl())} is {@link #renew()}.
     *
     * <p>Every backend of this project supports it (the kit checks it). The default, for a
     * {@code Lease} implemented elsewhere, renews when {@code ttl} is the current TTL and throws
     * {@link UnsupportedOperationException} otherwise: it never renews by a TTL other than asked.
     *
     * @throws IllegalArgumentException the backend cannot hold a lease of {@code ttl} (below
     *                                  {@link LeaseOptions#MIN_TTL}, or outside its own bounds); nothing changed
     * @throws LeaseLostException       the lease was lost, broken or taken over
     * @throws LockBackendException     the store could not be reached; the lease stays valid until its
     *                                  deadline (by the new TTL, if shorter)
     */
    default void renew(Duration ttl) {
        if (!ttl.equals(ttl())) {
            throw new UnsupportedOperationException(getClass().getName() + " cannot renew with a TTL other than " + ttl());
        }
        renew();
    }

    /**
     * Gives the lock up. Idempotent once it has succeeded. The lease is invalid from the call on.
     *
     * @throws LeaseLostException   the lease had already been lost; the current holder is not disturbed
     * @throws LockBackendException the store did not confirm the release: renewals have stopped, the
     *                              key frees by its TTL at the latest, and the release is retried in the background
     */
    void release();

    /**
     * Gives the lock up but keeps the key taken for {@code keepFor} from now, by the store: the lease
     * is renewed once with {@code keepFor} as its TTL and never again, so the key frees when that runs
     * out, whether this process is still alive or not (ShedLock's {@code lockAtLeastFor}) — except on a
     * backend that declares {@link Capability#HOLDER_DEATH_DETECTION}, whose store frees a dead
     * holder's keys at once, a kept one too. The lease is
     * invalid from the call on, its {@link #onLost} listeners never fire, and {@link #release()} after
     * it does nothing. A {@code keepFor} of zero or less is {@link #release()}.
     *
     * <p>Every backend of this project supports it (the kit checks it). The default, for a
     * {@code Lease} implemented elsewhere, throws {@link UnsupportedOperationException} unless
     * {@code keepFor} is zero or less.
     *
     * @throws IllegalArgumentException the backend cannot hold a lease of {@code keepFor} (see {@link #renew(Duration)}); nothing changed
     * @throws LeaseLostException       the lease had already been lost
     * @throws LockBackendException     the store could not be reached: nothing changed, the lease is still held
     */
    default void release(Duration keepFor) {
        if (!keepFor.isZero() && !keepFor.isNegative()) {
            throw new UnsupportedOperationException(getClass().getName() + " cannot keep the key after a release");
        }
        release();
    }

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
