package dev.latchkey.s3;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.ServerClock;
import dev.latchkey.spi.StoreProbe;
import dev.latchkey.spi.StoredRecord;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * A {@link ConditionalStore} over one S3 bucket and prefix: each record is the object
 * {@code <prefix>/<name>.lock}, its version the object's ETag (opaque: not an MD5 on every store).
 *
 * <p><b>Guarantee.</b> Create is {@code PutObject If-None-Match: *}, replace is
 * {@code PutObject If-Match: <etag>}; so the store is exactly as atomic as the server's conditional
 * writes, which AWS S3 guarantees (and which the TCK's CAS contract checks on any other server:
 * several emulators fail it). A write answers "not written" (empty) only when nothing of it was
 * applied nor can be later ({@link S3Answers}): its condition failed (412; 404 on {@code If-Match}:
 * gone), or every attempt was refused (409, a conflicting request in flight; 503 {@code SlowDown}
 * or 429, throttling). Any other failure — 500 included, which Ceph RGW answers to some racing
 * {@code If-Match} writes — is a {@link LockBackendException} naming the bucket and the endpoint,
 * retriable for 5xx, throttling, timeouts and connection failures; for a write it means the outcome
 * is unknown, and the lease engine reads the record to learn it.
 *
 * <p><b>The ETag's form in {@code If-Match}.</b> The ETag is sent as the server gave it, quoted, as
 * HTTP and AWS S3 have it; Ceph RGW (and reportedly DigitalOcean Spaces) compare it unquoted and
 * refuse a quoted one with 412 even when it is current. So until a replace has landed, a replace
 * refused in the quoted form is sent once more unquoted: both are conditional on the same version,
 * so at most one of them can land, and only on that version. The first form that lands is kept for
 * this store's life (one manager's), and later replaces use it alone.
 *
 * <p><b>Delete</b> never rests on {@code If-Match} on {@code DeleteObject}, which Ceph RGW ignores:
 * the record is first replaced, conditionally, by a tombstone of random content, whose ETag no other
 * client knows, and only then deleted. Between the two, no other client can write the object (a
 * create finds it present; a replace needs the tombstone's ETag), so the delete removes nothing but
 * the tombstone — never another client's record. A tombstone left by a delete that failed half-way
 * reads as absent, and a create takes its place by a conditional replace of it (of racing creates,
 * still exactly one wins). One gap remains where {@code DeleteObject} ignores {@code If-Match}: a
 * delete whose reply was lost and which the store applies only after another client's create has
 * replaced the tombstone removes that record. The lease engine never deletes.
 *
 * <p><b>SDK retries</b> ({@link S3Clients}). Reads are retried after any transient failure; a
 * conditional write only after an attempt known not to have been applied. A retry whose first
 * attempt did land answers 412: the store reports "not written", and the lease engine re-reads the
 * record and recognises its own lease id, so a landed write is never mistaken for a lost race. A
 * retried delete whose first attempt landed reports {@code false} (gone), which is true of the
 * record either way. (The lease engine never deletes: released records stay, carrying the fencing
 * counter.)
 *
 * <p><b>Age</b> ({@link Staleness}). With {@link Staleness#SERVER}, {@link StoredRecord#age()} is
 * the response's {@code Date} minus the object's {@code Last-Modified}, both from the server; the
 * two have one-second resolution, so one second is subtracted and a record is never judged older
 * than it is — provided both come from one clock. With {@link Staleness#OBSERVED} the age is
 * unknown (null) and the engine judges staleness by watching a version unchanged for a TTL.
 */
public final class S3ConditionalStore implements ConditionalStore {
    /** Ending of every record's object key. */
    private static final String SUFFIX = ".lock";
    /** How a tombstone's content begins: no lease record does (they begin {@code latchkey-lease}). */
    private static final byte[] TOMBSTONE = "latchkey-tombstone:".getBytes(StandardCharsets.US_ASCII);

    /** How the age of a record, and so its staleness, is judged. */
    public enum Staleness {
        /**
         * By the server's clock: {@code Date} − {@code Last-Modified}. Safe only where both headers
         * come from one clock, or from clocks kept well within the safety margin (TTL/5) of each other —
         * AWS S3's fleet is; a cluster of nodes behind a load balancer may not be. A fresh process
         * can take over a crashed holder's key on first sight once its TTL has passed.
         */
        SERVER,
        /**
         * By watching: a contender takes over only after it has seen the same version unchanged for
         * the holder's full TTL on its own monotonic clock; no wall clock is read at all. Costs a
         * fresh process (one {@code tryAcquire}) the ability to take over an abandoned key: it must
         * wait at least a TTL.
         */
        OBSERVED
    }

    private final S3Clients clients;
    private final String bucket;
    private final String base;      // "" or "prefix/"
    private final String where;       // for messages: bucket and endpoint, never a credential
    private final String description; // the masked URI
    private final Staleness staleness;
    /** The store's check before its first request ({@link S3StoreProbe}), or none. */
    private final StoreProbe probe;
    /** Requests sent, for the probe's account of its cost. */
    private final AtomicLong requests = new AtomicLong();
    /** Whether the store honours If-Match with the ETag quoted; null until a replace has landed. */
    private final AtomicReference<Boolean> quotedIfMatch = new AtomicReference<>();

    /**
     * @param prefix      folder inside the bucket, without leading or trailing slash ("" for the root)
     * @param endpoint    the server, for messages ("AWS S3 in <region>" when it is AWS itself)
     * @param description the lock URI with its secrets masked
     * @param probe       whether a manager on this store probes it first ({@link S3StoreProbe})
     */
    S3ConditionalStore(S3Clients clients, String bucket, String prefix, String endpoint, String description,
                       Staleness staleness, boolean probe) {
        this.probe = probe ? StoreProbe.of(() -> S3StoreProbe.run(this)) : StoreProbe.skipped();
        this.clients = Objects.requireNonNull(clients, "clients");
        this.staleness = Objects.requireNonNull(staleness, "staleness");
        this.bucket = Objects.requireNonNull(bucket, "bucket");
        this.base = prefix.isEmpty() ? "" : prefix + "/";
        this.where = "bucket " + bucket + " at " + endpoint;
        this.description = description;
    }

    /** How this store judges a record's age. */
    public Staleness staleness() {
        return staleness;
    }

    /** Probes the store now, when a manager opens ({@link StoreProbe#checkOnOpen}). */
    void probeOnOpen() {
        probe.checkOnOpen();
    }

    /** Object key {@code leaf} in the probe's folder, which {@link #list} never shows. */
    String probeKey(String leaf) {
        return base + ".latchkey-probe/" + leaf;
    }

    /** Bucket and endpoint, for messages. */
    String where() {
        return where;
    }

    /** Requests sent so far (each counted once, whatever the SDK retried). */
    long requests() {
        return requests.get();
    }

    /** The object key of record {@code name}. */
    String objectKey(String name) {
        return base + name + SUFFIX;
    }

    /** Object {@code key} as it is, tombstone or not. */
    Optional<StoredRecord> readAt(String key) {
        return readAt(key, staleness == Staleness.SERVER);
    }

    /** {@link #readAt(String)}, its age by the server's clock if {@code withServerAge} (else null). */
    Optional<StoredRecord> readAt(String key, boolean withServerAge) {
        ResponseBytes<GetObjectResponse> got;
        requests.incrementAndGet();
        try {
            got = clients.reads().getObjectAsBytes(b -> b.bucket(bucket).key(key).overrideConfiguration(clients.readLimits()));
        } catch (S3Exception e) {
            if (e.statusCode() == 404 && !S3Answers.isNoSuchBucket(e)) return Optional.empty();
            throw failure("GetObject", key, e);
        } catch (SdkException e) {
            throw failure("GetObject", key, e);
        }
        GetObjectResponse r = got.response();
        Duration age = withServerAge ? serverAge(r) : null;
        return Optional.of(new StoredRecord(got.asByteArray(), requireEtag(r.eTag(), "GetObject", key), age));
    }

    @Override
    public Optional<StoredRecord> read(String name) {
        probe.check();
        return readAt(objectKey(name)).filter(r -> !isTombstone(r.data()));
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        probe.check();
        return createAt(objectKey(name), data);
    }

    Optional<String> createAt(String key, byte[] data) {
        Optional<String> created = createIfAbsent(key, data, null);
        if (created.isPresent()) return created;
        // present: a half-done delete's tombstone is taken over by a conditional replace, so that
        // of racing creates still exactly one wins
        Optional<StoredRecord> there = readAt(key);
        return there.isPresent() && isTombstone(there.get().data())
                ? replaceAt(key, there.get().version(), data) : Optional.empty();
    }

    /**
     * {@code PutObject If-None-Match: *} alone, no tombstone taken over (the probe's keys are fresh);
     * {@code together}, if not null, runs between the request's head and its body ({@link #heldBody}).
     */
    Optional<String> createIfAbsent(String key, byte[] data, Runnable together) {
        return attempt("PutObject If-None-Match", key, data, together, b -> b.ifNoneMatch("*")).etag();
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        probe.check();
        return replaceAt(objectKey(name), Objects.requireNonNull(expectedVersion, "expectedVersion"), data);
    }

    Optional<String> replaceAt(String key, String expectedVersion, byte[] data) {
        return replaceAt(key, expectedVersion, data, null);
    }

    /** {@link #replaceAt(String, String, byte[])}, running {@code together} (if not null) between each request's head and body. */
    Optional<String> replaceAt(String key, String expectedVersion, byte[] data, Runnable together) {
        Boolean quoted = quotedIfMatch.get();
        if (quoted != null) return replaceIn(quoted, key, expectedVersion, data, together).etag();
        Answer quotedAnswer = replaceIn(true, key, expectedVersion, data, together);
        if (quotedAnswer.etag().isPresent()) {
            quotedIfMatch.compareAndSet(null, true);
            return quotedAnswer.etag();
        }
        // only a 412 may be the quoted form's refusal; after a refusal (409, throttling) the store is busy
        if (!quotedAnswer.conditionFailed()) return Optional.empty();
        Optional<String> bare = replaceIn(false, key, expectedVersion, data, together).etag();
        if (bare.isPresent()) quotedIfMatch.compareAndSet(null, false);
        return bare;
    }

    /** What a conditional write did: its new ETag, or none and whether its condition was found false. */
    private record Answer(Optional<String> etag, boolean conditionFailed) {
        static final Answer REFUSED = new Answer(Optional.empty(), false);
    }

    /**
     * One conditional replace with the ETag in one form. A 5xx answer leaves the outcome unknown, so
     * the record is read: our bytes there mean it landed; another version there (or none) means it
     * never can, because a version once replaced never returns; the expected version still there
     * leaves it unknown, and the 5xx is thrown. (Ceph RGW answers 500 to the losers of racing
     * replaces, its internal "cancelled": resolved here as the lost races they are.)
     */
    private Answer replaceIn(boolean quoted, String key, String expectedVersion, byte[] data, Runnable together) {
        try {
            return attempt("PutObject If-Match", key, data, together, b -> b.ifMatch(inForm(expectedVersion, quoted)));
        } catch (LockBackendException e) {
            if (!(e.getCause() instanceof S3Exception s3) || s3.statusCode() < 500 || S3Answers.refused(s3)) throw e;
            Optional<StoredRecord> now;
            try {
                now = readAt(key);
            } catch (LockBackendException unread) {
                e.addSuppressed(unread);
                throw e;
            }
            if (now.isPresent() && Arrays.equals(now.get().data(), data)) return new Answer(Optional.of(now.get().version()), false);
            if (now.isEmpty() || !inForm(now.get().version(), true).equals(inForm(expectedVersion, true))) return Answer.REFUSED;
            throw e;
        }
    }

    /** {@code etag} with its quotes ({@code "…"}, as HTTP has it) or without them. */
    private static String inForm(String etag, boolean quoted) {
        String bare = etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")
                ? etag.substring(1, etag.length() - 1) : etag;
        return quoted ? "\"" + bare + "\"" : bare;
    }

    /** Whether this store has learned that its server wants If-Match quoted (empty: not yet). */
    Optional<Boolean> ifMatchQuoted() {
        return Optional.ofNullable(quotedIfMatch.get());
    }

    /**
     * The clients, bucket and key prefix, for requests that are not this store's: the bench floor
     * (in lock-s3's src/bench, never in this jar) writes its own objects beside the records with them.
     */
    S3Clients clients() {
        return clients;
    }

    String bucket() {
        return bucket;
    }

    /** {@code ""} or {@code "prefix/"}: what every object key of this store starts with. */
    String keyPrefix() {
        return base;
    }

    private Answer attempt(String op, String key, byte[] data, Runnable together, Consumer<PutObjectRequest.Builder> condition) {
        PutObjectRequest.Builder req = PutObjectRequest.builder().bucket(bucket).key(key)
                .contentType("application/octet-stream").overrideConfiguration(clients.writeLimits());
        condition.accept(req);
        requests.incrementAndGet();
        try {
            return new Answer(Optional.of(requireEtag(clients.writes().putObject(req.build(), together == null
                    ? RequestBody.fromBytes(data) : heldBody(data, together)).eTag(), op, key)), false);
        } catch (S3Exception e) {
            if (notWritten(e)) return new Answer(Optional.empty(), S3Answers.conditionFailed(e));
            throw failure(op, key, e);
        } catch (SdkException e) {
            throw failure(op, key, e);
        }
    }

    /**
     * {@code data} as a body that runs {@code together} before its first byte is read, on every pass:
     * the SDK reads it once to sign it and once to send it, after the HTTP client has sent the
     * request's head. So racing writes leave together, each signed and its head already at the store,
     * rather than spread apart by each racer's own signing and sending (on S3Proxy's
     * {@code transient} store that raised the races caught from about 5% to 16%).
     */
    private static RequestBody heldBody(byte[] data, Runnable together) {
        return RequestBody.fromContentProvider(() -> new FilterInputStream(new ByteArrayInputStream(data)) {
            private boolean held;

            @Override
            public int read() throws IOException {
                hold();
                return super.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                hold();
                return super.read(b, off, len);
            }

            private void hold() {
                if (!held) {
                    held = true;
                    together.run();
                }
            }
        }, data.length, "application/octet-stream");
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        probe.check();
        return deleteAt(objectKey(name), Objects.requireNonNull(expectedVersion, "expectedVersion"));
    }

    boolean deleteAt(String key, String expectedVersion) {
        byte[] tombstone = (new String(TOMBSTONE, StandardCharsets.US_ASCII) + UUID.randomUUID())
                .getBytes(StandardCharsets.US_ASCII);
        Optional<String> buried = replaceAt(key, expectedVersion, tombstone);
        if (buried.isEmpty()) return false;
        requests.incrementAndGet();
        try {
            // If-Match where the store honours it (AWS S3); where it does not (Ceph RGW) only this
            // client knows the tombstone's ETag, so nothing else can be here to delete
            clients.writes().deleteObject(b -> b.bucket(bucket).key(key).ifMatch(inForm(buried.get(), quotedIfMatch.get() != Boolean.FALSE))
                    .overrideConfiguration(clients.writeLimits()));
        } catch (S3Exception e) {
            // the tombstone stays and reads as absent: the record is gone either way
            if (!notWritten(e)) throw failure("DeleteObject", key, e);
        } catch (SdkException e) {
            throw failure("DeleteObject", key, e);
        }
        return true;
    }

    private static boolean isTombstone(byte[] data) {
        return data.length >= TOMBSTONE.length && Arrays.equals(data, 0, TOMBSTONE.length, TOMBSTONE, 0, TOMBSTONE.length);
    }

    @Override
    public List<String> list(String namePrefix) {
        probe.check();
        List<String> names = new ArrayList<>();
        try {
            for (S3Object o : clients.reads().listObjectsV2Paginator(b -> b.bucket(bucket).prefix(base + namePrefix)
                    .overrideConfiguration(clients.readLimits())).contents()) {
                String k = o.key();
                // only our own records: names never hold '/', so deeper keys belong to something else
                if (k.endsWith(SUFFIX) && k.indexOf('/', base.length()) < 0) {
                    names.add(k.substring(base.length(), k.length() - SUFFIX.length()));
                }
            }
        } catch (SdkException e) {
            throw failure("ListObjectsV2", base + namePrefix, e);
        }
        return names;
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        clients.close();
    }

    /** The write was not applied and cannot land later (see {@link S3Clients} for why a refusal qualifies). */
    private static boolean notWritten(S3Exception e) {
        return S3Answers.conditionFailed(e) || S3Answers.refused(e);
    }

    private String requireEtag(String etag, String op, String key) {
        if (etag == null || etag.isEmpty()) {
            throw new LockBackendException("S3 " + op + " of " + key + " in " + where
                    + " returned no ETag: this store cannot hold locks", false);
        }
        return etag;
    }

    /** Date − Last-Modified (one-second resolution), by the server's clock; null without a usable Date. */
    private static Duration serverAge(GetObjectResponse r) {
        Instant now = ServerClock.httpDate(r.sdkHttpResponse().firstMatchingHeader("Date").orElse(null));
        return ServerClock.age(now, r.lastModified(), Duration.ofSeconds(1));
    }

    private LockBackendException failure(String op, String key, SdkException e) {
        boolean retriable;
        String why;
        if (e instanceof S3Exception s3) {
            int status = s3.statusCode();
            retriable = status >= 500 || status == 429 || status == 408;
            String code = S3Answers.errorCode(s3);
            why = "HTTP " + status + (code == null ? "" : " " + code);
            if (status == 403) why += " (the credentials need s3:GetObject, s3:PutObject, s3:DeleteObject and s3:ListBucket)";
            if ("NoSuchBucket".equals(code)) why += " (bucket " + bucket + " does not exist)";
            if (status == 501 || "NotImplemented".equals(code)) {
                why += " (this store does not support conditional writes; it cannot hold locks)";
                retriable = false;
            }
        } else {
            // connection refused, timeouts, broken responses: the store may come back
            retriable = e instanceof SdkClientException || e.retryable();
            why = e.getMessage();
        }
        return new LockBackendException("S3 " + op + " of " + key + " in " + where + " failed: " + why, retriable, e);
    }
}
