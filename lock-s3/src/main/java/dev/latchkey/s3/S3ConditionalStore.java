package dev.latchkey.s3;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.ServerClock;
import dev.latchkey.spi.StoredRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
 * {@code PutObject If-Match: <etag>}, delete is {@code DeleteObject If-Match: <etag>}; so the
 * store is exactly as atomic as the server's conditional writes, which AWS S3 guarantees (and which
 * the TCK's CAS contract checks on any other server: several emulators fail it). A write answers
 * "not written" (empty) only when nothing of it was applied nor can be later ({@link S3Answers}):
 * its condition failed (412; 404 on {@code If-Match}: gone), or every attempt was refused (409, a
 * conflicting request in flight; 503 {@code SlowDown} or 429, throttling). Any other failure is a
 * {@link LockBackendException} naming the bucket and the endpoint, retriable for 5xx, throttling,
 * timeouts and connection failures; for a write it means the outcome is unknown.
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

    /**
     * @param prefix      folder inside the bucket, without leading or trailing slash ("" for the root)
     * @param endpoint    the server, for messages ("AWS S3 in <region>" when it is AWS itself)
     * @param description the lock URI with its secrets masked
     */
    S3ConditionalStore(S3Clients clients, String bucket, String prefix, String endpoint, String description,
                       Staleness staleness) {
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

    /** The object key of record {@code name}. */
    String objectKey(String name) {
        return base + name + SUFFIX;
    }

    @Override
    public Optional<StoredRecord> read(String name) {
        String key = objectKey(name);
        ResponseBytes<GetObjectResponse> got;
        try {
            got = clients.reads().getObjectAsBytes(b -> b.bucket(bucket).key(key).overrideConfiguration(clients.readLimits()));
        } catch (S3Exception e) {
            if (e.statusCode() == 404 && !S3Answers.isNoSuchBucket(e)) return Optional.empty();
            throw failure("GetObject", key, e);
        } catch (SdkException e) {
            throw failure("GetObject", key, e);
        }
        GetObjectResponse r = got.response();
        Duration age = staleness == Staleness.SERVER ? serverAge(r) : null;
        return Optional.of(new StoredRecord(got.asByteArray(), requireEtag(r.eTag(), "GetObject", key), age));
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        return put("PutObject If-None-Match", objectKey(name), data, b -> b.ifNoneMatch("*"));
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        Objects.requireNonNull(expectedVersion, "expectedVersion");
        return put("PutObject If-Match", objectKey(name), data, b -> b.ifMatch(expectedVersion));
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

    private Optional<String> put(String op, String key, byte[] data, Consumer<PutObjectRequest.Builder> condition) {
        PutObjectRequest.Builder req = PutObjectRequest.builder().bucket(bucket).key(key)
                .contentType("application/octet-stream").overrideConfiguration(clients.writeLimits());
        condition.accept(req);
        try {
            return Optional.of(requireEtag(clients.writes().putObject(req.build(), RequestBody.fromBytes(data)).eTag(), op, key));
        } catch (S3Exception e) {
            if (notWritten(e)) return Optional.empty();
            throw failure(op, key, e);
        } catch (SdkException e) {
            throw failure(op, key, e);
        }
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        Objects.requireNonNull(expectedVersion, "expectedVersion");
        String key = objectKey(name);
        try {
            // Some stores (S3Proxy on Azure) answer a conditional delete of a missing key with 204
            // where S3 says 404; a look first keeps "false if gone" true there. Safety does not
            // rest on it: the delete itself stays conditional.
            String current = clients.reads().headObject(b -> b.bucket(bucket).key(key).overrideConfiguration(clients.readLimits())).eTag();
            if (!expectedVersion.equals(current)) return false;
            clients.writes().deleteObject(b -> b.bucket(bucket).key(key).ifMatch(expectedVersion)
                    .overrideConfiguration(clients.writeLimits()));
            return true;
        } catch (S3Exception e) {
            if (notWritten(e)) return false;
            throw failure("DeleteObject If-Match", key, e);
        } catch (SdkException e) {
            throw failure("DeleteObject If-Match", key, e);
        }
    }

    @Override
    public List<String> list(String namePrefix) {
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
