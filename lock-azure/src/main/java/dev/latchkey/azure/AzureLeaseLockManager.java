package dev.latchkey.azure;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpHeaders;
import com.azure.core.http.RequestConditions;
import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobItem;
import com.azure.storage.blob.models.BlobListDetails;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.LeaseStateType;
import com.azure.storage.blob.models.ListBlobsOptions;
import com.azure.storage.blob.options.BlockBlobSimpleUploadOptions;
import com.azure.storage.blob.specialized.BlobLeaseClient;
import com.azure.storage.blob.specialized.BlobLeaseClientBuilder;
import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.TimeSource;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * {@code mode=lease}: locks as Azure blob leases on {@code <prefix>/<encoded key>.lock}.
 *
 * <p><b>Guarantee.</b> Mutual exclusion and expiry are Azure's: a blob has at most one active lease,
 * and a lease not renewed within its duration expires by the <em>server's</em> clock, so no client
 * clock is involved. The lease duration is the TTL, which must be a whole number of seconds from 15
 * to 60 (Azure's only finite durations); other TTLs are refused rather than silently changed, as a
 * shorter lease would free a crashed holder's lock before its TTL and a longer one would hold it
 * past. Renew, release and break are the lease operations themselves; a broken or taken-over
 * holder's renew or release fails at the server ({@link AzureLease}). The blob must be a
 * {@code mode=lease} one: a {@code mode=etag} blob is refused after taking its lease and before
 * claiming it, and the lease given back ({@link LockBlobMode}).
 *
 * <p><b>Fencing.</b> The counter lives in the blob's metadata and is written only under the new
 * lease (lease id + ETag conditions) right after acquiring: whoever holds the lease reads the last
 * token and writes the next, and a holder whose lease was broken before that write cannot make it.
 * So tokens strictly increase across release, expiry, break and takeover.
 *
 * <p><b>Re-taking a key this manager released</b> skips the properties read: the manager keeps the
 * ETag and token of the holder record it released (lease operations leave the ETag alone), and when
 * the new lease's acquisition answers with that same ETag, the metadata is exactly that record, as
 * a read would have returned it (every metadata write moves the ETag). The next token is written
 * under the same conditions as after a read (our lease id, {@code If-Match} that ETag); any other
 * ETag, or none remembered, and the properties are read as usual. So acquire+release is four
 * requests (acquire lease, holder record, renew, release) instead of five.
 *
 * <p><b>Requests whose outcome is unknown</b> (a timeout, a lost reply, a 5xx) never leave a
 * phantom holder for a lease's duration: a lease acquisition that failed so, and a lease acquired
 * for a claim that then failed, are released with their own lease id — at once when the store
 * answered, else in the background ({@code LeaseRuntime.later}), backing off, until a release is
 * confirmed or the lease's duration has passed since the acquisition was sent. Releasing by lease id
 * touches no one else's lease. A holder record whose reply was lost, so that the SDK's retry
 * answered 412, is recognised as ours (the record names our lease id and our lease still renews).
 * A 409 to an acquisition is never our own grant: every try proposes our lease id, and Azure grants
 * an active lease again to its own id, so the SDK's retry after a lost or late reply is granted too.
 *
 * <p><b>Model.</b> {@code model/azure-lease.pml} is a spin model of this protocol and of
 * {@link AzureLease} (Azure's lease rules, the holder record, withdrawals, break, lost and late
 * replies), checked by {@code scripts/model-check.sh}; {@code docs/model-checking.md} says what it
 * proves for which bounds. A change to the protocol here belongs in the model too.
 */
final class AzureLeaseLockManager implements LockManager {
    private static final System.Logger LOG = System.getLogger(AzureLeaseLockManager.class.getName());
    static final Duration MIN_TTL = Duration.ofSeconds(15);
    static final Duration MAX_TTL = Duration.ofSeconds(60);
    private static final String SUFFIX = ".lock";
    private static final long MAX_POLL_MILLIS = 1000;
    private static final long FIRST_WITHDRAW_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final int MAX_REMEMBERED = 4096;
    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(
            EnumSet.of(Capability.FENCING_TOKENS, Capability.SERVER_SIDE_EXPIRY, Capability.LIST));

    private final BlobContainerClient container;
    private final String base;
    private final Duration timeout;
    private final String description;
    private final String where;
    private final TimeSource time;
    private final LeaseRuntime runtime;
    /** The holder record this manager last released, by blob name; bounded so a manager touching many keys stays small. */
    private final ConcurrentHashMap<String, Record> released = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** A holder record of ours as it landed: its ETag and fencing token. */
    private record Record(String etag, long token) {}

    /** @param timeout what one call may take, all its tries included */
    AzureLeaseLockManager(BlobContainerClient container, String prefix, Duration timeout, String description, LockContext context) {
        this.container = Objects.requireNonNull(container, "container");
        this.base = prefix.isEmpty() ? "" : prefix + "/";
        this.timeout = timeout;
        this.description = description;
        this.where = "container " + container.getBlobContainerName() + " at " + AzureStoreFactory.endpointOf(container);
        this.time = context.time();
        this.runtime = LeaseRuntime.create(context, "azblob");
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        LockKeys.validate(key);
        int seconds = leaseSeconds(options.ttl());
        ensureOpen();
        long called = time.nanoTime();
        AzureLease lease = attempt(key, options, seconds);
        if (lease == null) runtime.events().busy(key, called);
        return Optional.ofNullable(lease);
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        LockKeys.validate(key);
        int seconds = leaseSeconds(options.ttl());
        ensureOpen();
        long called = time.nanoTime();
        long deadline = called + maxWait.toNanos();
        long pauseMillis = 10;
        while (true) {
            AzureLease lease = attempt(key, options, seconds);
            if (lease != null) return lease;
            long remaining = deadline - time.nanoTime();
            if (remaining <= 0) {
                runtime.events().busy(key, called);
                throw new LockTimeoutException(key, maxWait, inspect(key).orElse(null));
            }
            // lease expiry and release are not announced: poll, backing off to 1 s, with jitter
            long pause = Math.min(Duration.ofNanos(remaining).toMillis() + 1,
                    pauseMillis / 2 + ThreadLocalRandom.current().nextLong(pauseMillis / 2 + 1));
            try {
                Thread.sleep(Math.max(1, pause));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockException("interrupted while waiting for lock '" + key + "'", e);
            }
            pauseMillis = Math.min(pauseMillis * 2, MAX_POLL_MILLIS);
            ensureOpen();
        }
    }

    /** Rejects TTLs Azure cannot serve exactly; returns the lease duration in seconds. */
    static int leaseSeconds(Duration ttl) {
        if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0 || ttl.toNanos() % 1_000_000_000L != 0) {
            throw new IllegalArgumentException("azblob mode=lease needs a TTL of whole seconds from 15s to 60s "
                    + "(Azure blob lease durations), was " + ttl + "; use mode=etag for other TTLs");
        }
        return (int) ttl.toSeconds();
    }

    private String blobName(String key) {
        return base + LockNames.encode(key) + SUFFIX;
    }

    /** One try: the lease, or null when someone else holds it. */
    private AzureLease attempt(String key, LeaseOptions options, int seconds) {
        String blobName = blobName(key);
        BlobClient blob = container.getBlobClient(blobName);
        String leaseId = UUID.randomUUID().toString();
        BlobLeaseClient leases = new BlobLeaseClientBuilder().blobClient(blob).leaseId(leaseId).buildClient();
        long sent = time.nanoTime();
        long expires = sent + TimeUnit.SECONDS.toNanos(seconds);
        Record last = released.remove(blobName);
        HttpHeaders granted = acquireLease(blob, leases, blobName, seconds, expires);
        if (granted == null) return null;
        // the blob as we left it: no metadata write since our record (its ETag is the one we remember)
        Record known = last != null && last.etag().equals(granted.getValue(HttpHeaderName.ETAG)) ? last : null;
        Record mine;
        try {
            mine = claim(blob, leases, blobName, key, leaseId, options, known);
        } catch (LeaseLostException e) {
            giveBack(leases, blobName, expires, e); // broken while we claimed it
            return null;
        } catch (RuntimeException e) {
            giveBack(leases, blobName, expires, e);
            throw e;
        }
        Runnable remember = () -> {
            if (mine.etag() != null && released.size() < MAX_REMEMBERED) released.put(blobName, mine);
        };
        AzureLease lease = new AzureLease(runtime, key, leaseId, mine.token(), options, sent, leases, blobName, where, timeout,
                remember);
        lease.begin(); // gives the lease back itself if the claim took so long that it would be invalid on arrival
        return lease;
    }

    /**
     * The acquisition's response headers (its ETag is the blob's) if we got the lease, null if
     * someone else holds it; creates the (empty, marked) blob first when it does not exist. An
     * acquisition whose outcome is unknown is withdrawn in the background before the failure is thrown.
     */
    private HttpHeaders acquireLease(BlobClient blob, BlobLeaseClient leases, String blobName, int seconds, long expires) {
        for (int i = 0; i < 3; i++) {
            try {
                return leases.acquireLeaseWithResponse(seconds, null, timeout, Context.NONE).getHeaders();
            } catch (BlobStorageException e) {
                if (e.getStatusCode() == 409) return null; // LeaseAlreadyPresent: another lease id (a retry of ours is granted)
                if (!AzureErrors.blobMissing(e)) throw withdrawn(leases, blobName, expires, e);
            } catch (RuntimeException e) {
                throw withdrawn(leases, blobName, expires, e);
            }
            createBlob(blob, blobName);
        }
        return null; // created and deleted under us repeatedly: report busy, the caller may retry
    }

    /** After a failed acquisition: withdraws it if it may have been granted; returns what to throw. */
    private LockBackendException withdrawn(BlobLeaseClient leases, String blobName, long expires, RuntimeException e) {
        LockBackendException failure = AzureErrors.failure("acquire lease", blobName, where, e);
        if (outcomeUnknown(failure)) withdrawLater(leases, blobName, expires, false, FIRST_WITHDRAW_NANOS);
        return failure;
    }

    /**
     * A failure after which the request may still have been applied: no answer, or a server error
     * (what {@link AzureErrors#failure} marks retriable), or something unexpected.
     */
    private static boolean outcomeUnknown(RuntimeException e) {
        return e instanceof LockBackendException b ? b.isRetriable() : !(e instanceof LockException);
    }

    private void createBlob(BlobClient blob, String blobName) {
        try {
            blob.getBlockBlobClient().uploadWithResponse(new BlockBlobSimpleUploadOptions(BinaryData.fromBytes(new byte[0]))
                    .setMetadata(LockBlobMode.marker(LockBlobMode.LEASE))
                    .setRequestConditions(new BlobRequestConditions().setIfNoneMatch("*")), timeout, Context.NONE);
        } catch (BlobStorageException e) {
            if (e.getStatusCode() != 409 && e.getStatusCode() != 412) throw AzureErrors.failure("create", blobName, where, e);
            // someone else created it first: fine
        } catch (RuntimeException e) {
            throw AzureErrors.failure("create", blobName, where, e);
        }
    }

    /**
     * Under our new lease: refuses a {@code mode=etag} blob, reads the last token and records us as
     * holder with the next one; returns our record. {@code known}: the blob's record as it stands
     * (ours, released), so the read is not needed.
     *
     * @throws LeaseLostException our lease was broken or taken before the record landed
     */
    private Record claim(BlobClient blob, BlobLeaseClient leases, String blobName, String key, String leaseId,
                         LeaseOptions options, Record known) {
        if (known == null) {
            BlobProperties p = properties(blob, blobName);
            if (LockBlobMode.isEtagBlob(p.getMetadata(), p.getBlobSize())) {
                throw LockBlobMode.mismatch(blobName, where, LockBlobMode.ETAG, LockBlobMode.LEASE);
            }
            known = new Record(p.getETag(), HolderMetadata.token(p.getMetadata(), blobName + " in " + where));
        }
        long token = known.token() + 1;
        try {
            HttpHeaders written = blob.setMetadataWithResponse(HolderMetadata.of(key, leaseId, token, time.now(), options),
                    new BlobRequestConditions().setLeaseId(leaseId).setIfMatch(known.etag()), timeout, Context.NONE).getHeaders();
            return new Record(written.getValue(HttpHeaderName.ETAG), token);
        } catch (BlobStorageException e) {
            if (e.getStatusCode() != 412 && e.getStatusCode() != 409) throw AzureErrors.failure("record holder", blobName, where, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("record holder", blobName, where, e);
        }
        // 412: the ETag moved, or the lease is no longer ours. An SDK retry of a record that landed
        // moves the ETag too: it is ours if the blob names our lease and that lease still renews.
        BlobProperties now = properties(blob, blobName);
        if (leaseId.equals(HolderMetadata.leaseId(now.getMetadata()))) {
            try {
                leases.renewLeaseWithResponse((RequestConditions) null, timeout, Context.NONE);
                return new Record(now.getETag(), token); // no write since the read: our lease renewed, unbroken
            } catch (BlobStorageException e) {
                if (e.getStatusCode() != 409 && e.getStatusCode() != 412) throw AzureErrors.failure("renew lease", blobName, where, e);
            } catch (RuntimeException e) {
                throw AzureErrors.failure("renew lease", blobName, where, e);
            }
        }
        throw new LeaseLostException(Reason.BROKEN, "lease on '" + key + "' was broken while it was being claimed");
    }

    private BlobProperties properties(BlobClient blob, String blobName) {
        try {
            return blob.getPropertiesWithResponse(null, timeout, Context.NONE).getValue();
        } catch (RuntimeException e) {
            throw AzureErrors.failure("read properties", blobName, where, e);
        }
    }

    /**
     * Gives back the lease of a claim that failed with {@code why}: one release now if the store
     * answered (so the key is free when the caller hears of the failure), in the background if
     * that fails or the store did not answer (the caller is not held up by an unreachable store).
     */
    private void giveBack(BlobLeaseClient leases, String blobName, long expires, RuntimeException why) {
        if (!outcomeUnknown(why) && released(leases, true)) return;
        withdrawLater(leases, blobName, expires, true, outcomeUnknown(why) ? 0 : FIRST_WITHDRAW_NANOS);
    }

    /**
     * Releases a lease of ours that no caller holds, after {@code delayNanos} and then backing off,
     * until a release is confirmed or the lease would have expired ({@code expires}).
     *
     * @param granted whether the lease was surely granted: then "no lease of ours" ends the
     *                withdrawal; otherwise the acquisition may still be on its way, so it goes on
     */
    private void withdrawLater(BlobLeaseClient leases, String blobName, long expires, boolean granted, long delayNanos) {
        runtime.later(Duration.ofNanos(delayNanos), () -> {
            if (released(leases, granted)) return;
            long next = Math.max(FIRST_WITHDRAW_NANOS, delayNanos * 2);
            if (time.nanoTime() + next - expires < 0) {
                withdrawLater(leases, blobName, expires, granted, next);
            } else {
                LOG.log(Level.DEBUG, "gave up withdrawing an unclaimed lease on " + blobName + " in " + where
                        + "; it expires by itself");
            }
        });
    }

    /** One release by lease id; true when no lease of ours is left (released, or, if {@code granted}, none there). */
    private boolean released(BlobLeaseClient leases, boolean granted) {
        try {
            leases.releaseLeaseWithResponse((RequestConditions) null, timeout, Context.NONE);
            return true;
        } catch (BlobStorageException e) {
            return AzureErrors.blobMissing(e) || (granted && e.getStatusCode() == 409);
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public Optional<LockInfo> inspect(String key) {
        LockKeys.validate(key);
        ensureOpen();
        String blobName = blobName(key);
        try {
            BlobProperties p = container.getBlobClient(blobName).getPropertiesWithResponse(null, timeout, Context.NONE).getValue();
            requireLeaseMode(p.getMetadata(), p.getBlobSize(), blobName);
            return p.getLeaseState() == LeaseStateType.LEASED ? Optional.ofNullable(HolderMetadata.info(p.getMetadata(), key))
                    : Optional.empty();
        } catch (BlobStorageException e) {
            if (AzureErrors.blobMissing(e)) return Optional.empty();
            throw AzureErrors.failure("read properties", blobName, where, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("read properties", blobName, where, e);
        }
    }

    @Override
    public List<LockInfo> list(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        ensureOpen();
        List<LockInfo> out = new ArrayList<>();
        String from = base + LockNames.listingPrefix(prefix);
        try {
            ListBlobsOptions o = new ListBlobsOptions().setPrefix(from).setDetails(new BlobListDetails().setRetrieveMetadata(true));
            for (BlobItem item : container.listBlobs(o, timeout)) {
                if (!item.getName().endsWith(SUFFIX)) continue;
                Long size = item.getProperties().getContentLength();
                requireLeaseMode(item.getMetadata(), size == null ? 0 : size, item.getName());
                if (item.getProperties().getLeaseState() != LeaseStateType.LEASED) continue;
                LockInfo info = HolderMetadata.info(item.getMetadata(), null);
                if (info != null && info.key().startsWith(prefix)) out.add(info);
            }
        } catch (RuntimeException e) {
            throw AzureErrors.failure("list", from, where, e);
        }
        out.sort(Comparator.comparing(LockInfo::key));
        return out;
    }

    /** Refuses to report on (or break) a {@code mode=etag} blob as if it were free. */
    private void requireLeaseMode(Map<String, String> metadata, long size, String blobName) {
        if (LockBlobMode.isEtagBlob(metadata, size)) throw LockBlobMode.mismatch(blobName, where, LockBlobMode.ETAG, LockBlobMode.LEASE);
    }

    @Override
    public boolean forceRelease(String key) {
        return breakLease(key, null);
    }

    /**
     * Breaks the lease only while the blob's metadata names {@code leaseId}: the break is
     * conditional on the ETag read with it, and a new holder's claim changes the ETag (its holder
     * record; lease operations leave the ETag alone). A holder caught between its lease and that
     * record is broken too — and then fails its claim, so no lease of it is ever handed out.
     */
    @Override
    public boolean forceRelease(String key, String leaseId) {
        return breakLease(key, Objects.requireNonNull(leaseId, "leaseId"));
    }

    private boolean breakLease(String key, String leaseId) {
        LockKeys.validate(key);
        ensureOpen();
        String blobName = blobName(key);
        BlobClient blob = container.getBlobClient(blobName);
        try {
            BlobProperties p = blob.getPropertiesWithResponse(null, timeout, Context.NONE).getValue();
            requireLeaseMode(p.getMetadata(), p.getBlobSize(), blobName);
            if (p.getLeaseState() != LeaseStateType.LEASED) return false;
            RequestConditions condition = null;
            if (leaseId != null) {
                if (!leaseId.equals(HolderMetadata.leaseId(p.getMetadata()))) return false;
                condition = new RequestConditions().setIfMatch(p.getETag());
            }
            new BlobLeaseClientBuilder().blobClient(blob).buildClient().breakLeaseWithResponse(0, condition, timeout, Context.NONE);
            return true;
        } catch (BlobStorageException e) {
            // gone, no lease any more, or (412) changed since we looked: not the lease we were to break
            if (AzureErrors.blobMissing(e) || e.getStatusCode() == 409 || e.getStatusCode() == 412) return false;
            throw AzureErrors.failure("break lease", blobName, where, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("break lease", blobName, where, e);
        }
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void close() {
        closed = true;
    }

    private void ensureOpen() {
        if (closed) throw new IllegalStateException("lock manager for " + description + " is closed");
    }
}
