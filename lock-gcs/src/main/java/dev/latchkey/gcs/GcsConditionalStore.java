package dev.latchkey.gcs;

import com.google.api.gax.paging.Page;
import com.google.api.gax.retrying.RetrySettings;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.cloud.NoCredentials;
import com.google.cloud.http.HttpTransportOptions;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.HttpStorageOptions;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.ServerClock;
import dev.latchkey.spi.StoredRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The {@link ConditionalStore} over Google Cloud Storage: each record is the object
 * {@code <prefix>/<name>.lock}, its version the object's generation.
 *
 * <p><b>Atomicity</b> rests on GCS's generation preconditions alone: create is an upload with
 * {@code ifGenerationMatch=0} (only if no live object), replace and delete carry
 * {@code ifGenerationMatch=<generation read>}; GCS checks and applies each in one step, so of racing
 * writers on one generation exactly one succeeds, and the others get 412, reported here as "lost the
 * race" (empty / false). A replace of a deleted record also gets 412; a delete that finds the
 * object gone (404) returns false.
 *
 * <p><b>Reads are one request.</b> Each write puts the record in the body (so
 * {@code gcloud storage cat} shows it) and, base64, in the custom metadata {@value #RECORD_METADATA}
 * of the same upload; a read fetches only the object's metadata, so record, generation and update
 * time come from one response and always belong together, however fast others write. A record too
 * big for GCS's 8 KiB of metadata is read from the body with {@code ifGenerationMatch} on the
 * generation just seen (retried if it changed in between).
 *
 * <p><b>Age</b> comes from the server's clock: the object's {@code updated} time against the
 * {@code Date} of the same metadata response (see {@link ServerDateTransportOptions}), so staleness
 * never depends on a client's wall clock. The two are stamped by different machines (storage and
 * front end), whose clocks GCS does not promise to agree; an age is therefore taken
 * {@link #CLOCK_DISAGREEMENT} short, so a front end up to that far ahead of the storage still never
 * makes a record look older than it is (a late takeover costs waiting; an early one, exclusion).
 *
 * <p><b>At most one write per second to one object.</b> GCS documents "an update limit on each
 * object of once per second" (its quotas page: "maximum rate of writes to the same object name: one
 * write per second") and answers faster writes with {@code 429 rateLimitExceeded}, applying nothing.
 * So {@link #minWriteInterval()} is one second (the engine spaces its writes to a record by it and
 * refuses heartbeats faster than it, hence TTLs of at least 3 s), and a 429 on create, replace or
 * delete is "not written" (empty / false), never an error: the lease engine then reads the record
 * and decides. The client that sends writes does not retry a 429 ({@link NoRetryOnThrottling}), so
 * that answer arrives at once instead of after a retry that the same limit refuses again. And this
 * store never sends a write of an object sooner than a second after the reply to its own previous
 * write of it that may have landed: GCS counts the interval between the moments it <em>applies</em>
 * writes, somewhere between send and reply, so spacing writes by their send times alone (as the
 * engine does) would let a write whose predecessor was slow to arrive land early and be refused.
 *
 * <p><b>Failures</b> (unreachable endpoint, timeouts, 5xx; a 429 on a read or list) raise
 * {@link LockBackendException}, retriable: a write answered so may have been applied, and the lease
 * engine treats it as outcome unknown. Missing or rejected credentials (401), permissions (403), a
 * missing bucket or other 4xx raise it not retriable, naming the problem. Messages name the bucket
 * and endpoint, never a credential. The client's own retries are cut to one retry with short timeouts, so an outage surfaces in seconds; a write whose reply was
 * lost is retried by the client, and a retry whose first attempt landed reads as a lost race (412),
 * which the lease engine resolves by re-reading its own lease id.
 */
public final class GcsConditionalStore implements ConditionalStore {
    private static final String SUFFIX = ".lock";
    /** Custom metadata holding the record (base64), so one metadata request reads record and generation together. */
    static final String RECORD_METADATA = "latchkey-record";
    /** GCS allows 8 KiB of custom metadata per object; larger records are read from the body. */
    private static final int MAX_INLINE = 6 * 1024;
    /** Body reads retry when the record changes between the metadata and the body request. */
    private static final int READ_ATTEMPTS = 10;
    /**
     * How far ahead of the storage's clock ({@code updated}) a front end's ({@code Date}) may be
     * without a record looking older than it is. Google does not document it; its clocks agree
     * within milliseconds in practice. Our test server drifts them up to 400 ms apart either way.
     */
    static final Duration CLOCK_DISAGREEMENT = Duration.ofMillis(500);
    /** The object {@link #probe} writes, beside the records (no record name starts with '.'); it stays. */
    private static final String PROBE_LEAF = ".latchkey-probe";

    /** Reads and lists: the client's default retries (a 429 on a read is not the per-object write limit; a retry may pass). */
    private final Storage storage;
    /** Uploads and deletes: the same client, except that it does not retry a 429. */
    private final Storage writes;
    private final WriteSpacing spacing = new WriteSpacing();
    private final ServerDateTransportOptions transport;
    private final String bucket;
    private final String objectPrefix;
    /** " at <endpoint>" for an emulator, else empty: appended to every location in messages. */
    private final String at;

    private GcsConditionalStore(Storage storage, Storage writes, ServerDateTransportOptions transport, String bucket,
                                String prefix, String endpoint) {
        this.storage = storage;
        this.writes = writes;
        this.transport = transport;
        this.bucket = bucket;
        this.objectPrefix = prefix.isEmpty() ? "" : prefix + "/";
        this.at = endpoint == null ? "" : " at " + endpoint;
    }

    /**
     * Opens a client on {@code bucket}, storing records under {@code prefix} (no leading or trailing
     * {@code /}; empty for the bucket's root).
     *
     * @param endpoint an emulator or test server ({@code http://host:port}); then no credentials are
     *                 sent. Null for Google's service with Application Default Credentials.
     * @param project  the project id, or null to take it from the environment
     * @param timeout  connect and read timeout of each request; also bounds the client's retry
     */
    public static GcsConditionalStore open(String bucket, String prefix, String endpoint, String project, Duration timeout) {
        HttpStorageOptions.Builder options = StorageOptions.http();
        if (project != null) options.setProjectId(project);
        if (endpoint != null) {
            options.setHost(endpoint).setCredentials(NoCredentials.getInstance());
        } else {
            try {
                options.setCredentials(GoogleCredentials.getApplicationDefault());
            } catch (IOException e) {
                throw new LockBackendException("no Google credentials for " + where(bucket, prefix, endpoint)
                        + ": set up Application Default Credentials (gcloud auth application-default login,"
                        + " GOOGLE_APPLICATION_CREDENTIALS, or a service account on the machine): " + e.getMessage(), false, e);
            }
        }
        try {
            return open(options.build(), bucket, prefix, endpoint, timeout);
        } catch (LockBackendException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockBackendException("cannot create a GCS client for " + where(bucket, prefix, endpoint) + ": " + e.getMessage(), false, e);
        }
    }

    /**
     * Opens the store's clients from {@code base} — the URI's settings, or the options of the
     * application's own {@link Storage} ({@link GcsLocks}): its host, credentials, project,
     * telemetry and HTTP transport factory (proxy, TLS) are kept; the request timeouts, the retry
     * settings and the transport's {@code Date} capture are the store's. The clients are the store's
     * own: {@link #close} closes them, and nothing of the application's.
     *
     * @param endpoint named in messages (null: Google's service)
     */
    static GcsConditionalStore open(HttpStorageOptions base, String bucket, String prefix, String endpoint, Duration timeout) {
        int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
        HttpTransportOptions baseTransport = base.getTransportOptions() instanceof HttpTransportOptions t
                ? t : HttpTransportOptions.newBuilder().build();
        ServerDateTransportOptions transport = new ServerDateTransportOptions(baseTransport, millis, millis);
        HttpStorageOptions.Builder options = base.toBuilder()
                .setTransportOptions(transport)
                // one retry, quickly: a lock client must report an outage, not hide it for minutes
                .setRetrySettings(RetrySettings.newBuilder()
                        .setMaxAttempts(2)
                        .setInitialRetryDelayDuration(Duration.ofMillis(100))
                        .setRetryDelayMultiplier(2.0)
                        .setMaxRetryDelayDuration(Duration.ofMillis(500))
                        .setInitialRpcTimeoutDuration(timeout)
                        .setRpcTimeoutMultiplier(1.0)
                        .setMaxRpcTimeoutDuration(timeout)
                        .setTotalTimeoutDuration(timeout.multipliedBy(2).plusMillis(500))
                        .build());
        Storage storage;
        Storage writes;
        try {
            storage = options.build().getService();
            writes = options.setStorageRetryStrategy(NoRetryOnThrottling.INSTANCE).build().getService();
        } catch (RuntimeException e) {
            throw new LockBackendException("cannot create a GCS client for " + where(bucket, prefix, endpoint) + ": " + e.getMessage(), false, e);
        }
        return new GcsConditionalStore(storage, writes, transport, bucket, prefix, endpoint);
    }

    private static String where(String bucket, String prefix, String endpoint) {
        return "gs://" + bucket + (prefix.isEmpty() ? "" : "/" + prefix) + (endpoint == null ? "" : " at " + endpoint);
    }

    private BlobId id(String name) {
        return BlobId.of(bucket, objectPrefix + name + SUFFIX);
    }

    @Override
    public Optional<StoredRecord> read(String name) {
        BlobId id = id(name);
        for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
            Blob meta;
            Instant serverNow;
            try {
                transport.clear();
                meta = storage.get(id);
                serverNow = transport.lastServerDate();
            } catch (StorageException e) {
                throw failure("read", id, e);
            }
            if (meta == null) return Optional.empty();
            long generation = meta.getGeneration();
            String inline = meta.getMetadata() == null ? null : meta.getMetadata().get(RECORD_METADATA);
            byte[] data;
            if (inline != null) {
                data = decode(inline, id);
            } else {
                try {
                    data = storage.readAllBytes(id, Storage.BlobSourceOption.generationMatch(generation));
                } catch (StorageException e) {
                    if (e.getCode() == 412 || e.getCode() == 404) continue; // rewritten or deleted in between
                    throw failure("read", id, e);
                }
            }
            return Optional.of(new StoredRecord(data, Long.toString(generation), age(meta, serverNow)));
        }
        throw new LockBackendException("cannot read " + describe(id) + ": it changed on each of "
                + READ_ATTEMPTS + " attempts", true);
    }

    private byte[] decode(String inline, BlobId id) {
        try {
            return Base64.getDecoder().decode(inline);
        } catch (IllegalArgumentException e) {
            throw new LockBackendException("metadata " + RECORD_METADATA + " of " + describe(id)
                    + " is not base64 (written by another program?)", false, e);
        }
    }

    /** Server {@code Date} minus the object's {@code updated} (millisecond precision); null if the server sent no date. */
    private static Duration age(Blob meta, Instant serverNow) {
        OffsetDateTime updated = meta.getUpdateTimeOffsetDateTime();
        // the allowed disagreement is taken off like a coarser resolution of updated: never overstated
        return ServerClock.age(serverNow, updated == null ? null : updated.toInstant(), CLOCK_DISAGREEMENT);
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        return write(id(name), data, Storage.BlobTargetOption.doesNotExist(), "create");
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        return write(id(name), data, Storage.BlobTargetOption.generationMatch(generation(expectedVersion)), "replace");
    }

    private Optional<String> write(BlobId id, byte[] data, Storage.BlobTargetOption condition, String op) {
        try {
            return Optional.of(Long.toString(upload(id, data, condition).getGeneration()));
        } catch (StorageException e) {
            if (WriteSpacing.notWritten(e)) return Optional.empty();
            throw failure(op, id, e);
        }
    }

    /** One upload of {@code data} as body and (base64) metadata, as every write sends it, spaced. */
    private Blob upload(BlobId id, byte[] data, Storage.BlobTargetOption... conditions) {
        return spaced(id, () -> sendRecord(writes, id, data, conditions));
    }

    /**
     * The request every record write sends (body, the record inline in metadata, no gzip) with
     * {@code conditions}, unspaced; static so the bench floor sends the very same request through
     * {@link #writeClient()}.
     */
    static Blob sendRecord(Storage client, BlobId id, byte[] data, Storage.BlobTargetOption... conditions) {
        BlobInfo.Builder info = BlobInfo.newBuilder(id).setContentType("text/plain; charset=utf-8");
        String inline = Base64.getEncoder().encodeToString(data);
        if (inline.length() <= MAX_INLINE) info.setMetadata(Map.of(RECORD_METADATA, inline));
        Storage.BlobTargetOption[] options = Arrays.copyOf(conditions, conditions.length + 1);
        // records are a few hundred bytes: gzip would only add work
        options[conditions.length] = Storage.BlobTargetOption.disableGzipContent();
        return client.create(info.build(), data, options);
    }

    /** The client that sends writes: it does not retry a 429. */
    Storage writeClient() {
        return writes;
    }

    private <T> T spaced(BlobId id, Supplier<T> write) {
        return spacing.spaced(id.getName(), describe(id), write);
    }

    /**
     * The object {@code leaf} right under the prefix, beside the records: the caller picks a leaf no
     * record name can be (one starting with {@code .}), as the probe and the bench floor do.
     */
    BlobId besideRecords(String leaf) {
        if (leaf.isEmpty() || leaf.indexOf('/') >= 0 || leaf.endsWith(SUFFIX)) {
            throw new IllegalArgumentException("not a loose object name beside the records: " + leaf);
        }
        return BlobId.of(bucket, objectPrefix + leaf);
    }

    /**
     * Checks that the store refuses what exclusion rests on, or throws a not retriable
     * {@link LockBackendException} naming the store and what it ignored. On the object
     * {@code <prefix>/.latchkey-probe} (made by the first probe under the prefix, then left for the
     * next ones): a create with {@code ifGenerationMatch=0} must get 412 — except the very first,
     * after which a second create must; and a replace with a random generation (not the object's,
     * but for a chance of 2<sup>-63</sup>) must get 412. Two requests that change nothing, on an
     * honest store, and a 412 is answered whatever the write rate (a 429 is waited out once).
     */
    void probe() {
        BlobId id = besideRecords(PROBE_LEAF);
        List<String> ignored = new ArrayList<>();
        if (probeWrite(id, "probe create", Storage.BlobTargetOption.doesNotExist())
                && probeWrite(id, "probe second create", Storage.BlobTargetOption.doesNotExist())) {
            ignored.add("ifGenerationMatch=0 (a second create of an existing object succeeded)");
        }
        long stale = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        if (probeWrite(id, "probe stale replace", Storage.BlobTargetOption.generationMatch(stale))) {
            ignored.add("ifGenerationMatch=<a generation the object does not have> (the replace succeeded)");
        }
        if (!ignored.isEmpty()) {
            throw new LockBackendException(describe() + " ignores " + String.join(" and ", ignored)
                    + ": a lock there would let several holders in, so none is opened (if this is wrong,"
                    + " `latchkey check` the store and open with probe=false)", false);
        }
    }

    /**
     * A probe write, unspaced: false if refused (412), true if it landed. A write that landed but
     * whose answer was lost reads as refused once the client's retry gets 412: on an honest store
     * that is the right verdict, so a flaky network never makes the probe refuse one.
     */
    private boolean probeWrite(BlobId id, String what, Storage.BlobTargetOption condition) {
        for (int attempt = 0; ; attempt++) {
            try {
                sendRecord(writes, id, bytes(what), condition);
                return true;
            } catch (StorageException e) {
                if (e.getCode() == 412) return false;
                if (e.getCode() != 429 || attempt > 0) throw failure(what, id, e);
            }
            try {
                Thread.sleep(WriteSpacing.MIN_INTERVAL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockException("interrupted while probing " + describe(id), e);
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        BlobId id = id(name);
        try {
            // false on 404: the record is already gone
            long generation = generation(expectedVersion);
            return spaced(id, () -> writes.delete(id, Storage.BlobSourceOption.generationMatch(generation)));
        } catch (StorageException e) {
            if (WriteSpacing.notWritten(e)) return false;
            throw failure("delete", id, e);
        }
    }

    @Override
    public List<String> list(String namePrefix) {
        List<String> names = new ArrayList<>();
        try {
            Page<Blob> page = storage.list(bucket, Storage.BlobListOption.prefix(objectPrefix + namePrefix),
                    Storage.BlobListOption.fields(Storage.BlobField.NAME));
            for (Blob b : page.iterateAll()) {
                String rest = b.getName().substring(objectPrefix.length());
                // only our records: skip "sub/folders" and other programs' objects under the prefix
                if (rest.endsWith(SUFFIX) && rest.indexOf('/') < 0) {
                    names.add(rest.substring(0, rest.length() - SUFFIX.length()));
                }
            }
        } catch (StorageException e) {
            throw failure("list", BlobId.of(bucket, objectPrefix + namePrefix), e);
        }
        return names;
    }

    /** One second: GCS's per-object update limit (see the class comment). */
    @Override
    public Duration minWriteInterval() {
        return WriteSpacing.MIN_INTERVAL;
    }

    private static long generation(String version) {
        try {
            return Long.parseLong(version);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a GCS generation: '" + version + "'", e);
        }
    }

    private LockBackendException failure(String op, BlobId id, StorageException e) {
        int code = e.getCode();
        boolean retriable = code != 401 && code != 403
                && (code <= 0 || code == 408 || code == 429 || code >= 500 || e.isRetryable());
        String what = switch (code) {
            case 401 -> "not authenticated: the request carried no valid credentials (" + (at.isEmpty()
                    ? "Application Default Credentials" : "the Storage client's credentials") + " missing, expired or wrong)";
            case 403 -> "permission denied (the lock needs storage.objects.create/get/update/delete/list)";
            case 404 -> "bucket not found";
            default -> code > 0 ? "HTTP " + code : "unreachable";
        };
        return new LockBackendException("GCS " + op + " of " + describe(id) + " failed: " + what + ": "
                + e.getMessage(), retriable, e);
    }

    private String describe(BlobId id) {
        return "gs://" + id.getBucket() + "/" + id.getName() + at;
    }

    @Override
    public String describe() {
        return "gs://" + bucket + "/" + objectPrefix + at;
    }

    @Override
    public void close() {
        for (Storage client : List.of(storage, writes)) {
            try {
                client.close();
            } catch (Exception e) {
                // nothing is pending on a closed lock manager; the client only frees its connections
            }
        }
    }
}
