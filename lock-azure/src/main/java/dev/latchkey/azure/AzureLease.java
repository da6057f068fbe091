package dev.latchkey.azure;

import com.azure.core.http.RequestConditions;
import com.azure.core.util.Context;
import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.specialized.BlobLeaseClient;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.ManagedLease;
import java.time.Duration;

/**
 * A held blob lease ({@code mode=lease}): renew and release are Azure's lease operations, which the
 * server refuses once the lease is not ours.
 *
 * <p><b>Renewal under ambiguity.</b> Azure's renew is idempotent and restarts the lease's timer
 * when it lands. One renew call may send it more than once (the SDK retries a try whose reply was
 * lost or late, the heartbeat retries a call that failed); every try of a call is sent after the
 * {@code sentNanos} the call reports, so whichever landed, Azure's expiry is at least
 * {@code sentNanos + TTL}, and counting validity from it is right. A call that failed extends
 * nothing here, though it may have extended the lease at Azure, which then holds the key longer
 * than we count — never shorter.
 *
 * <p><b>Release</b> renews first (Azure lets the old lease id release a <em>broken</em> lease, which
 * would hide a force release from its holder), then releases. Right after that renew succeeded, a
 * 409 to the release is our own release landing twice (the SDK retried it after a lost reply): the
 * key is free, and release returns normally. Likewise, once a release of ours may have landed, the
 * renew of a later call (the caller's, or the background retry's) that finds the lease no longer
 * ours counts as released — unless Azure says it was broken. Not reported, as the key is free either
 * way: a force release that lands between the renew and the release, or before an earlier release of
 * ours whose outcome was unknown, followed by someone else's lease. A release that returns normally
 * tells the manager ({@code onReleased}), which remembers this lease's holder record for its next
 * take of the key; that memory is only a hint, checked against the blob's ETag before it is used.
 *
 * <p><b>Why a lease was lost</b> ({@link LeaseLostException#reason()}): Azure's
 * {@code LeaseIsBrokenAndCannotBeRenewed} is {@link Reason#BROKEN}; 404 is {@link Reason#GONE};
 * {@code LeaseNotPresentWithLeaseOperation} (the lease ran out, and no one holds the blob now) is
 * {@link Reason#EXPIRED}; another 409 or 412 (another lease id holds the blob) is
 * {@link Reason#TAKEN_OVER}.
 *
 * <p><b>A new TTL</b> ({@link #renew(Duration)}): Azure renews a lease by the duration it was
 * acquired with, and an active lease is given another only by acquiring it again under its own id.
 * So the renewal renews first — which proves the lease is still ours and not broken, as an acquire
 * would silently take a broken lease back — then acquires with the new duration. Both tries are sent
 * after {@code sentNanos}, so whichever of them Azure holds, counting validity from it by the
 * shorter of the two durations is right ({@link ManagedLease} shortens validity before the write).
 * A force release that lands between the two is undone by the acquire (no one else can hold the key
 * then: the acquire fails if another lease took it).
 *
 * <p><b>Time.</b> Each renewal ends within the manager's call timeout or a tenth of the TTL,
 * whichever is shorter (1.5 s for a 15 s lease): a renewal that hangs ends well inside the safety
 * margin (TTL/5) and leaves the heartbeat time to try again before the lease's validity ends. A
 * release's calls end within the call timeout: a released lease has no deadline left to keep, so a
 * shorter bound would only turn a slow but answering service into a failed release.
 *
 * <p><b>Model.</b> Renew and release as {@code model/azure-lease.pml} models them (see
 * {@link AzureLeaseLockManager}).
 */
final class AzureLease extends ManagedLease {
    private final BlobLeaseClient leases;
    private final String blobName;
    private final String where;
    private final Duration callTimeout;
    /** The lease duration Azure holds for us; guarded by ManagedLease's serialisation of store calls. */
    private int leaseSeconds;
    /** A release of ours was sent and may have landed; guarded by ManagedLease's serialisation of store calls. */
    private boolean releaseSent;
    private final Runnable onReleased;

    /**
     * @param callTimeout the manager's bound on one call, all tries included
     * @param onReleased  runs when a release returns normally (the manager remembers our record)
     */
    AzureLease(LeaseRuntime runtime, String key, String leaseId, long token, LeaseOptions options, long sent,
               BlobLeaseClient leases, String blobName, String where, Duration callTimeout, Runnable onReleased) {
        super(runtime, key, leaseId, token, options, sent);
        this.onReleased = onReleased;
        this.leases = leases;
        this.blobName = blobName;
        this.where = where;
        this.callTimeout = callTimeout;
        this.leaseSeconds = AzureLeaseLockManager.leaseSeconds(options.ttl());
    }

    void begin() {
        start();
    }

    @Override
    protected long renewInStore(Duration ttl, long sentNanos) {
        Duration tenth = ttl.dividedBy(10);
        Duration timeout = callTimeout.compareTo(tenth) < 0 ? callTimeout : tenth;
        renew("renew", timeout);
        int seconds = AzureLeaseLockManager.leaseSeconds(ttl);
        if (seconds != leaseSeconds) {
            try {
                leases.acquireLeaseWithResponse(seconds, null, timeout, Context.NONE);
            } catch (BlobStorageException e) {
                throw lostOr("renew", e);
            } catch (RuntimeException e) {
                throw AzureErrors.failure("acquire lease (new duration)", blobName, where, e);
            }
            leaseSeconds = seconds;
        }
        return sentNanos;
    }

    @Override
    protected void checkTtl(Duration ttl) {
        AzureLeaseLockManager.leaseSeconds(ttl);
    }

    @Override
    protected void releaseInStore() {
        releaseAtAzure();
        onReleased.run();
    }

    private void releaseAtAzure() {
        try {
            renew("release", callTimeout);
        } catch (LeaseLostException e) {
            if (releaseSent && e.reason() != Reason.BROKEN && e.reason() != Reason.GONE) return; // our earlier release landed
            throw e;
        }
        releaseSent = true;
        try {
            leases.releaseLeaseWithResponse((RequestConditions) null, callTimeout, Context.NONE);
        } catch (BlobStorageException e) {
            if (e.getStatusCode() == 409) return; // ours a moment ago (the renew): a retry of this release found it done
            throw lostOr("release", e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("release lease", blobName, where, e);
        }
    }

    /** One renewal; {@code what} names the operation it serves in a loss message. */
    private void renew(String what, Duration timeout) {
        try {
            leases.renewLeaseWithResponse((RequestConditions) null, timeout, Context.NONE);
        } catch (BlobStorageException e) {
            throw lostOr(what, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("renew lease", blobName, where, e);
        }
    }

    /** 409/412/404 mean the lease is no longer ours; the error code says why. */
    private RuntimeException lostOr(String what, BlobStorageException e) {
        int s = e.getStatusCode();
        if (s != 409 && s != 412 && !AzureErrors.blobMissing(e)) return AzureErrors.failure(what + " lease", blobName, where, e);
        Reason reason;
        String why;
        if (AzureErrors.is(e, BlobErrorCode.LEASE_IS_BROKEN_AND_CANNOT_BE_RENEWED)) {
            reason = Reason.BROKEN;
            why = "it was force-released";
        } else if (s == 404) {
            reason = Reason.GONE;
            why = "the lock blob is gone";
        } else if (AzureErrors.is(e, BlobErrorCode.LEASE_NOT_PRESENT_WITH_LEASE_OPERATION)) {
            reason = Reason.EXPIRED;
            why = "the lease ran out at Azure before it was renewed";
        } else {
            reason = Reason.TAKEN_OVER;
            why = "another lease holds the blob now (" + e.getErrorCode() + "): ours had expired at Azure, or was"
                    + " broken, before that one was taken";
        }
        return new LeaseLostException(reason, "cannot " + what + " lease on '" + key() + "' (token " + fencingToken() + "): " + why);
    }
}
