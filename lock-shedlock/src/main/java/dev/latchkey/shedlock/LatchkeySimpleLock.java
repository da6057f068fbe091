package dev.latchkey.shedlock;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * One ShedLock lock: a Latchkey lease taken or extended with {@code lockConfiguration}. As every
 * {@link AbstractSimpleLock}, it is invalid once unlocked or extended (the extension is a new lock on
 * the same lease).
 *
 * <p><b>Guarantee.</b> {@link #unlock()} before {@code lockAtLeastFor} has passed leaves the key taken
 * until then, by the store ({@link Lease#release(Duration)}: the lease is renewed with the time left
 * as its TTL and never renewed again), so the store frees the key at that instant, whether this
 * process lives or not (but for backends that free a dead holder's keys at once,
 * {@link dev.latchkey.Capability#HOLDER_DEATH_DETECTION}). Where the backend
 * cannot hold a lease that short or of that length (under {@link LeaseOptions#MIN_TTL}; Azure's lease
 * mode takes 15 to 60 whole seconds), the lease is given back from this process at that instant instead:
 * the store holds it until {@code lockAtMostFor} has passed at least, so a process that dies meanwhile
 * keeps the key taken longer, never shorter. An unlock that finds the lease lost (it ran past
 * {@code lockAtMostFor}, or was force-released) logs it and returns: the task has run, nothing is
 * undone; one that the store does not confirm throws its {@link LockBackendException}.
 */
final class LatchkeySimpleLock extends AbstractSimpleLock {
    private static final System.Logger LOG = System.getLogger(LatchkeySimpleLock.class.getName());

    private final Lease lease;

    LatchkeySimpleLock(LockConfiguration lockConfiguration, Lease lease) {
        super(lockConfiguration);
        this.lease = lease;
    }

    @Override
    protected void doUnlock() {
        Duration keep = Duration.between(ClockProvider.now(), lockConfiguration.getLockAtLeastUntil());
        try {
            if (keep.isNegative() || keep.isZero()) {
                lease.release();
            } else {
                keepUntilLockAtLeast(keep);
            }
        } catch (LeaseLostException e) {
            LOG.log(Level.WARNING, "ShedLock lock '" + lockConfiguration.getName() + "' had been lost before its unlock: "
                    + e.getMessage());
        }
    }

    private void keepUntilLockAtLeast(Duration keep) {
        if (keep.compareTo(LeaseOptions.MIN_TTL) >= 0) {
            try {
                lease.release(keep);
                return;
            } catch (IllegalArgumentException e) {
                // the backend holds no lease of this TTL: give it back from here, below
            }
        }
        CompletableFuture.delayedExecutor(keep.toNanos(), TimeUnit.NANOSECONDS).execute(this::releaseQuietly);
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
        // ShedLock promises the old lock expired after lockAtMostFor: past it, it is not brought back
        if (!ClockProvider.now().isBefore(lockConfiguration.getLockAtMostUntil()) || !lease.isValid()) {
            releaseQuietly();
            return Optional.empty();
        }
        try {
            lease.renew(LatchkeyLockProvider.ttl(newConfiguration.getLockAtMostFor()));
            return Optional.of(new LatchkeySimpleLock(newConfiguration, lease));
        } catch (LeaseLostException | LockBackendException e) {
            LOG.log(Level.WARNING, "could not extend ShedLock lock '" + lockConfiguration.getName() + "': " + e.getMessage());
            releaseQuietly(); // the caller holds no lock from here on
            return Optional.empty();
        }
    }

    /** A release whose failure changes nothing for the caller: the key frees by its TTL at the latest. */
    private void releaseQuietly() {
        try {
            lease.release();
        } catch (LeaseLostException | LockBackendException e) {
            LOG.log(Level.DEBUG, () -> "releasing ShedLock lock '" + lockConfiguration.getName() + "': " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "LatchkeySimpleLock[" + lockConfiguration + ", " + lease + "]";
    }
}
