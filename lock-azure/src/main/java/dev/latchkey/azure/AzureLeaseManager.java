package dev.latchkey.azure;

import com.azure.core.http.RequestConditions;
import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.BlobErrorCode;
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
import dev.latchkey.LockException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.ManagedLease;
import dev.latchkey.spi.TimeSource;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code mode=lease}: locks as Azure blob leases on {@code <prefix>/<encoded key>.lock}.
 *
 * <p><b>Guarantee.</b> Mutual exclusion and expiry are Azure's: a blob has at most one active lease,
 * and a lease not renewed within its duration expires by the <em>server's</em> clock, so no client
 * clock is involved. The lease duration is the TTL, which must be a whole number of seconds from 15
 * to 60 (Azure's only finite durations); other TTLs are refused rather than silently changed, as a
 * shorter lease would free a crashed holder's lock before its TTL and a longer one would hold it
 * past. Renew, release and break are the lease operations themselves; a broken or taken-over
 * holder's renew or release fails at the server ({@link LeaseLostException}).
 *
 * <p><b>Fencing.</b> The counter lives in the blob's metadata and is written only under the new
 * lease (lease id + ETag conditions) right after acquiring: whoever holds the lease reads the last
 * token and writes the next, and a holder whose lease was broken before that write cannot make it.
 * So tokens strictly increase across release, expiry, break and takeover.
 *
 * <p>Release renews first (Azure would let the old lease id release a broken lease) and then
 * releases; a break landing between the two is not reported, and the key is free either way. A
 * retried release whose first attempt landed answers "no lease" and is reported as
 * {@link LeaseLostException} — again, the key is free.
 */
final class AzureLeaseManager implements LockManager {
    static final Duration MIN_TTL = Duration.ofSeconds(15);
    static final Duration MAX_TTL = Duration.ofSeconds(60);
    private static final String SUFFIX = ".lock";
    private static final String M_KEY = "latchkey_key";
    private static final String M_OWNER = "latchkey_owner";
    private static final String M_LEASE = "latchkey_lease";
    private static final String M_TOKEN = "latchkey_token";
    private static final String M_ACQUIRED = "latchkey_acquired";
    private static final String M_TTL = "latchkey_ttl_ms";
    private static final String M_META = "latchkey_meta";
    private static final long MAX_POLL_MILLIS = 1000;
    private static final Set<Capability> CAPABILITIES = Collections.unmodifiableSet(
            EnumSet.of(Capability.FENCING_TOKENS, Capability.SERVER_SIDE_EXPIRY, Capability.LIST));

    private final BlobContainerClient container;
    private final String base;
    private final Duration timeout;
    private final String description;
    private final String where;
    private final TimeSource time;
    private final LeaseRuntime runtime;
    private volatile boolean closed;

    AzureLeaseManager(BlobContainerClient container, String prefix, Duration timeout, String description, LockContext context) {
        this.container = Objects.requireNonNull(container, "container");
        this.base = prefix.isEmpty() ? "" : prefix + "/";
        this.timeout = timeout;
        this.description = description;
        this.where = "container " + container.getBlobContainerName() + " at " + AzureBlobs.endpointOf(container);
        this.time = context.time();
        this.runtime = LeaseRuntime.create(context, "azblob");
    }

    @Override
    public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
        LockKeys.validate(key);
        int seconds = leaseSeconds(options.ttl());
        ensureOpen();
        return Optional.ofNullable(attempt(key, options, seconds));
    }

    @Override
    public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
        LockKeys.validate(key);
        int seconds = leaseSeconds(options.ttl());
        ensureOpen();
        long deadline = time.nanoTime() + maxWait.toNanos();
        long pauseMillis = 10;
        while (true) {
            AzureLease lease = attempt(key, options, seconds);
            if (lease != null) return lease;
            long remaining = deadline - time.nanoTime();
            if (remaining <= 0) throw new LockTimeoutException(key, maxWait, inspect(key).orElse(null));
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

    /** One try: the lease, or null when someone else holds it. */
    private AzureLease attempt(String key, LeaseOptions options, int seconds) {
        String blobName = base + LockNames.encode(key) + SUFFIX;
        BlobClient blob = container.getBlobClient(blobName);
        String leaseId = UUID.randomUUID().toString();
        BlobLeaseClient leases = new BlobLeaseClientBuilder().blobClient(blob).leaseId(leaseId).buildClient();
        long sent = time.nanoTime();
        if (!acquireLease(blob, leases, blobName, seconds)) return null;
        try {
            long token = writeHolder(blob, blobName, key, leaseId, options);
            AzureLease lease = new AzureLease(key, leaseId, token, options, sent, leases, blobName);
            lease.begin();
            return lease;
        } catch (LeaseLostException e) {
            releaseQuietly(leases); // broken before we could claim the token: someone else may have it now
            return null;
        } catch (RuntimeException e) {
            releaseQuietly(leases);
            throw e;
        }
    }

    /** Best effort after a failed claim: a lease we cannot release runs out by itself. */
    private static void releaseQuietly(BlobLeaseClient leases) {
        try {
            leases.releaseLease();
        } catch (RuntimeException ignored) {
            // not ours any more, or the store is unreachable: either way nothing else to do
        }
    }

    /** True if we got the lease; creates the (empty) blob first when it does not exist. */
    private boolean acquireLease(BlobClient blob, BlobLeaseClient leases, String blobName, int seconds) {
        for (int i = 0; i < 3; i++) {
            try {
                leases.acquireLeaseWithResponse(seconds, null, timeout, Context.NONE);
                return true;
            } catch (BlobStorageException e) {
                if (e.getStatusCode() == 409) return false; // LeaseAlreadyPresent
                if (!AzureErrors.blobMissing(e)) throw AzureErrors.failure("acquire lease", blobName, where, e);
            } catch (RuntimeException e) {
                throw AzureErrors.failure("acquire lease", blobName, where, e);
            }
            createBlob(blob, blobName);
        }
        return false; // created and deleted under us repeatedly: report busy, the caller may retry
    }

    private void createBlob(BlobClient blob, String blobName) {
        try {
            blob.getBlockBlobClient().uploadWithResponse(new BlockBlobSimpleUploadOptions(BinaryData.fromBytes(new byte[0]))
                    .setRequestConditions(new BlobRequestConditions().setIfNoneMatch("*")), timeout, Context.NONE);
        } catch (BlobStorageException e) {
            if (e.getStatusCode() != 409 && e.getStatusCode() != 412) throw AzureErrors.failure("create", blobName, where, e);
            // someone else created it first: fine
        } catch (RuntimeException e) {
            throw AzureErrors.failure("create", blobName, where, e);
        }
    }

    /** Under our lease: reads the last token and records us as holder with the next one. */
    private long writeHolder(BlobClient blob, String blobName, String key, String leaseId, LeaseOptions options) {
        try {
            BlobProperties p = blob.getPropertiesWithResponse(null, timeout, Context.NONE).getValue();
            long token = parseLong(p.getMetadata().get(M_TOKEN)) + 1;
            Map<String, String> meta = new HashMap<>();
            meta.put(M_KEY, enc(key));
            meta.put(M_OWNER, enc(options.owner()));
            meta.put(M_LEASE, leaseId);
            meta.put(M_TOKEN, Long.toString(token));
            meta.put(M_ACQUIRED, time.now().toString());
            meta.put(M_TTL, Long.toString(options.ttl().toMillis()));
            if (!options.metadata().isEmpty()) meta.put(M_META, encodeMap(options.metadata()));
            blob.setMetadataWithResponse(meta, new BlobRequestConditions().setLeaseId(leaseId).setIfMatch(p.getETag()),
                    timeout, Context.NONE);
            return token;
        } catch (BlobStorageException e) {
            if (e.getStatusCode() == 412 || e.getStatusCode() == 409) {
                throw new LeaseLostException(Reason.BROKEN, "lease on '" + key + "' was broken while it was being claimed");
            }
            throw AzureErrors.failure("record holder", blobName, where, e);
        } catch (RuntimeException e) {
            throw AzureErrors.failure("record holder", blobName, where, e);
        }
    }

    @Override
    public Optional<LockInfo> inspect(String key) {
        LockKeys.validate(key);
        ensureOpen();
        String blobName = base + LockNames.encode(key) + SUFFIX;
        try {
            BlobProperties p = container.getBlobClient(blobName).getPropertiesWithResponse(null, timeout, Context.NONE).getValue();
            return p.getLeaseState() == LeaseStateType.LEASED ? Optional.ofNullable(info(p.getMetadata(), key)) : Optional.empty();
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
                if (!item.getName().endsWith(SUFFIX) || item.getProperties().getLeaseState() != LeaseStateType.LEASED) continue;
                LockInfo info = item.getMetadata() == null ? null : info(item.getMetadata(), null);
                if (info != null && info.key().startsWith(prefix)) out.add(info);
            }
        } catch (RuntimeException e) {
            throw AzureErrors.failure("list", from, where, e);
        }
        out.sort(Comparator.comparing(LockInfo::key));
        return out;
    }

    @Override
    public boolean forceRelease(String key) {
        return breakLease(key, null);
    }

    /**
     * Breaks the lease only while the blob's metadata names {@code leaseId}: the break is
     * conditional on the ETag read with it, and a new holder's claim changes the ETag (its holder
     * record). A holder caught between its lease and that record is broken too — and then fails its
     * claim, so no lease of it is ever handed out.
     */
    @Override
    public boolean forceRelease(String key, String leaseId) {
        return breakLease(key, Objects.requireNonNull(leaseId, "leaseId"));
    }

    private boolean breakLease(String key, String leaseId) {
        LockKeys.validate(key);
        ensureOpen();
        String blobName = base + LockNames.encode(key) + SUFFIX;
        BlobClient blob = container.getBlobClient(blobName);
        try {
            BlobProperties p = blob.getPropertiesWithResponse(null, timeout, Context.NONE).getValue();
            if (p.getLeaseState() != LeaseStateType.LEASED) return false;
            RequestConditions condition = null;
            if (leaseId != null) {
                LockInfo holder = info(p.getMetadata(), key);
                if (holder == null || !leaseId.equals(holder.leaseId())) return false;
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

    /** Holder info from blob metadata; null if the blob carries none (never acquired through us). */
    private static LockInfo info(Map<String, String> raw, String expectedKey) {
        Map<String, String> m = new HashMap<>();
        raw.forEach((k, v) -> m.put(k.toLowerCase(Locale.ROOT), v));
        if (m.get(M_KEY) == null) return null;
        String key = dec(m.get(M_KEY));
        if (expectedKey != null && !expectedKey.equals(key)) return null;
        Instant acquired = null;
        try {
            if (m.get(M_ACQUIRED) != null) acquired = Instant.parse(m.get(M_ACQUIRED));
        } catch (DateTimeParseException e) {
            acquired = null; // informational only
        }
        // renewals are not written, so only the holder knows its current expiry
        return new LockInfo(key, m.get(M_OWNER) == null ? null : dec(m.get(M_OWNER)), m.get(M_LEASE),
                parseLong(m.get(M_TOKEN)), acquired, null, decodeMap(m.get(M_META)));
    }

    private static long parseLong(String s) {
        if (s == null) return 0;
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Metadata values must be ASCII header values: percent-encode. */
    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String dec(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static String encodeMap(Map<String, String> map) {
        StringBuilder sb = new StringBuilder();
        map.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : "&").append(enc(k)).append('=').append(enc(v)));
        return enc(sb.toString());
    }

    private static Map<String, String> decodeMap(String s) {
        Map<String, String> out = new LinkedHashMap<>();
        if (s == null || s.isEmpty()) return out;
        for (String pair : dec(s).split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) out.put(dec(pair.substring(0, eq)), dec(pair.substring(eq + 1)));
        }
        return out;
    }

    /** A held blob lease: renew and release are the lease operations, refused by Azure once lost. */
    private final class AzureLease extends ManagedLease {
        private final BlobLeaseClient leases;
        private final String blobName;

        AzureLease(String key, String leaseId, long token, LeaseOptions options, long sent, BlobLeaseClient leases, String blobName) {
            super(runtime, key, leaseId, token, options, sent);
            this.leases = leases;
            this.blobName = blobName;
        }

        void begin() {
            start();
        }

        @Override
        protected long renewInStore(Duration ttl, long sentNanos) {
            try {
                leases.renewLeaseWithResponse((RequestConditions) null, timeout, Context.NONE);
                return sentNanos;
            } catch (BlobStorageException e) {
                throw lostOr("renew", e);
            } catch (RuntimeException e) {
                throw AzureErrors.failure("renew lease", blobName, where, e);
            }
        }

        @Override
        protected void releaseInStore() {
            try {
                // Azure lets the old id release a *broken* lease; a renew first refuses it, so a
                // force-released holder learns of its loss instead of "releasing" the freed key
                leases.renewLeaseWithResponse((RequestConditions) null, timeout, Context.NONE);
                leases.releaseLeaseWithResponse((RequestConditions) null, timeout, Context.NONE);
            } catch (BlobStorageException e) {
                throw lostOr("release", e);
            } catch (RuntimeException e) {
                throw AzureErrors.failure("release lease", blobName, where, e);
            }
        }

        /** 409/412/404 mean the lease is no longer ours (broken, expired and taken, or the blob deleted). */
        private RuntimeException lostOr(String what, BlobStorageException e) {
            int s = e.getStatusCode();
            if (s == 409 || s == 412 || AzureErrors.blobMissing(e)) {
                boolean broken = AzureErrors.is(e, BlobErrorCode.LEASE_IS_BROKEN_AND_CANNOT_BE_RENEWED);
                Reason reason = broken ? Reason.BROKEN : s == 404 ? Reason.GONE : Reason.TAKEN_OVER;
                String why = broken ? "it was force-released"
                        : s == 404 ? "the lock blob is gone"
                        : "the lease is no longer held (" + e.getErrorCode() + ")";
                return new LeaseLostException(reason, "cannot " + what + " lease on '" + key() + "' (token " + fencingToken() + "): " + why);
            }
            return AzureErrors.failure(what + " lease", blobName, where, e);
        }
    }
}
