package dev.latchkey.gcs.testserver;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.latchkey.gcs.testserver.Http.Part;
import dev.latchkey.gcs.testserver.Http.Reply;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small Google Cloud Storage server speaking the JSON API over HTTP on loopback — only the calls
 * the {@code gs://} backend and its tests use: bucket get/insert; object upload
 * ({@code uploadType=multipart} and {@code media}), metadata get, download ({@code alt=media}, also
 * under {@code /download/storage/v1/…}), patch, delete and list ({@code prefix}, {@code pageToken}).
 *
 * <p><b>Why it exists:</b> no GCS emulator with working generation preconditions can be installed on
 * this project's machines (the Firebase storage emulator ignores {@code ifGenerationMatch};
 * {@code google-cloud-nio}'s {@code LocalStorageHelper} rejects or ignores preconditions;
 * fake-gcs-server and Google's testbench come from registries we cannot reach). So the backend is
 * tested against this server, over the real client library and the real wire protocol. It proves the
 * backend uses GCS correctly <em>as GCS documents it</em>; it does not prove anything about Google's
 * service itself — {@code latchkey check gs://…} (the TCK run against a live bucket) does that.
 *
 * <p><b>Guarantees</b> (what makes it an honest stand-in for the lock's purposes):
 * <ul>
 *   <li>{@code ifGenerationMatch}, {@code ifGenerationNotMatch}, {@code ifMetagenerationMatch} and
 *       {@code ifMetagenerationNotMatch} are checked and the write applied under one lock, so of any
 *       number of concurrent writes conditioned on one generation exactly one succeeds
 *       ({@code ifGenerationMatch=0}: only if no live object exists);</li>
 *   <li>GCS's limit of one write per second to one object name is enforced ({@link MutationRateLimit};
 *       strictly unless an {@link Adversity} admits some bursts): an upload, patch or delete of a name whose last
 *       applied write is less than {@link #DEFAULT_OBJECT_WRITE_INTERVAL} ago gets
 *       {@code 429 rateLimitExceeded} and changes nothing. A write whose preconditions fail gets
 *       {@code 412} whatever the rate (it would change nothing either). Configurable per server
 *       ({@link #start(int, Duration)}; zero turns it off);</li>
 *   <li>generations are never reused for one name, not even after a delete: strictly increasing,
 *       from one server-wide counter (GCS uses microsecond timestamps; so does this server where
 *       the clock allows), or random under an {@link Adversity};</li>
 *   <li>errors have GCS's JSON shape ({@code {"error":{"code":412,"errors":[{"reason":…}]}}}) so
 *       the Java client raises exactly what it raises against GCS;</li>
 *   <li>request bodies with {@code Content-Encoding: gzip} are accepted (the Java client gzips
 *       uploads); {@code md5Hash}/{@code crc32c} sent with an upload are verified;</li>
 *   <li>every response carries a {@code Date} header, the true time (the JDK's server stamps it);
 *       object times are the storage's clock: the same, or drifting from it under an {@link Adversity};
 *       {@link #stepClock} steps both at once, as a client sees them (for the kit's server-clock tests).</li>
 * </ul>
 * No object versioning, no ACLs; no authentication unless an {@link Adversity} asks for bearer
 * tokens. State lives in memory and is gone when the server stops.
 *
 * <p><b>Adversity</b> ({@link #start(int, Duration, Adversity)}): where GCS's documentation allows
 * more than a client may assume, the server can do the less convenient thing — random generations,
 * {@code Date} and {@code updated} from two drifting clocks, bursts sometimes admitted, requests
 * failing on their own before or after a write is applied, credentials checked.
 *
 * <p><b>Faults for tests:</b> {@link #loseReplies} makes the next requests on one object be served
 * in full — a write applied — and then answered with a 503 or a dropped connection instead: the
 * write whose outcome its client cannot know.
 *
 * <p>Start in-process with {@link #start()} (port 0) or as a process with {@link #main}.
 */
public final class GcsTestServer implements AutoCloseable {
    static {
        // Without it the JDK server waits for delayed ACKs (Nagle): ~40 ms per request. Read once,
        // when the first HttpServer of the JVM is made, so it must be set before that.
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    /** GCS's documented limit: "an update limit on each object of once per second". */
    public static final Duration DEFAULT_OBJECT_WRITE_INTERVAL = Duration.ofSeconds(1);

    /** Requests a {@linkplain #loseReplies fault} can match, by what they do to one object (GET: metadata or download). */
    public enum Request { UPLOAD, PATCH, DELETE, GET }

    /** How a {@linkplain #loseReplies lost} answer reaches the client. */
    public enum LostReply {
        /** {@code 503 backendError} in GCS's error shape. */
        SERVICE_UNAVAILABLE,
        /**
         * The connection is closed without a response. The JDK's {@code HttpURLConnection} (under
         * Google's client) then resends a GET once by itself, so a GET fault may be used up without
         * the client ever seeing it; uploads and deletes are not resent.
         */
        CONNECTION_CLOSED
    }

    private static final int MAX_LIST_PAGE = 1000;
    private static final String WRITE_INTERVAL_FLAG = "--object-write-interval-ms=";

    private final HttpServer http;
    private final ExecutorService executor;
    /** One lock for all state: every precondition check and the write it guards happen under it. */
    private final Object lock = new Object();
    private final Map<String, Bucket> buckets = new HashMap<>();
    private long lastGeneration;
    private final MutationRateLimit rateLimit; // guarded by lock
    private final LostReplies lostReplies = new LostReplies();
    private final Adversary adversary;
    private final AtomicInteger requests = new AtomicInteger();

    private record Bucket(String name, Instant created, TreeMap<String, StoredObject> objects) {}

    /** One request being served: its exchange, and how to lose its answer once its object is known. */
    private final class Call {
        final HttpExchange ex;
        LostReply lose;

        Call(HttpExchange ex) {
            this.ex = ex;
        }

        /** Names the object this request acts on; from here on its answer may be lost. */
        void on(Request request, String bucket, String object) {
            lose = lostReplies.take(request, bucket, object);
        }
    }

    private GcsTestServer(InetSocketAddress address, Duration objectWriteInterval, Adversity adversity) throws IOException {
        adversary = new Adversary(adversity);
        rateLimit = new MutationRateLimit(objectWriteInterval, adversary::admitBurst);
        http = HttpServer.create(address, 64);
        AtomicInteger threads = new AtomicInteger();
        executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "gcs-test-server-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        http.setExecutor(executor);
        http.createContext("/", this::handle);
    }

    /** Starts a server on {@code 127.0.0.1} on a free port, with GCS's per-object write limit. */
    public static GcsTestServer start() {
        return start(0);
    }

    /** Starts a server on {@code 127.0.0.1:port} ({@code 0} = a free port), with GCS's per-object write limit. */
    public static GcsTestServer start(int port) {
        return start(port, DEFAULT_OBJECT_WRITE_INTERVAL);
    }

    /**
     * Starts a server on {@code 127.0.0.1:port} ({@code 0} = a free port) that refuses a write to an
     * object name sooner than {@code objectWriteInterval} after the last one ({@link Duration#ZERO}:
     * no limit).
     */
    public static GcsTestServer start(int port, Duration objectWriteInterval) {
        return start(port, objectWriteInterval, Adversity.none());
    }

    /** As {@link #start(int, Duration)}, doing on purpose what {@code adversity} says (printed to stderr). */
    public static GcsTestServer start(int port, Duration objectWriteInterval, Adversity adversity) {
        try {
            GcsTestServer s = new GcsTestServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
                    objectWriteInterval, adversity);
            if (!adversity.honest()) System.err.println("GCS test server on port " + s.port() + ": " + adversity);
            s.http.start();
            return s;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the GCS test server on port " + port + ": " + e, e);
        }
    }

    public int port() {
        return http.getAddress().getPort();
    }

    /** {@code http://127.0.0.1:PORT}, the value for a {@code gs://} URI's {@code endpoint=}. */
    public String endpoint() {
        return "http://127.0.0.1:" + port();
    }

    /** A {@code gs://} URI for {@code bucket/prefix} on this server (creates the bucket if needed). */
    public String uri(String bucket, String prefix) {
        createBucket(bucket);
        return "gs://" + bucket + "/" + prefix + "?endpoint=" + endpoint() + "&project=test";
    }

    /** Creates a bucket if absent (as {@code buckets.insert} would). */
    public void createBucket(String name) {
        synchronized (lock) {
            buckets.computeIfAbsent(name, n -> new Bucket(n, adversary.storageNow(), new TreeMap<>()));
        }
    }

    /**
     * Steps the server's clock, its front end's and its storage's alike, to the true time plus
     * {@code offset} (negative: behind; {@link Duration#ZERO}: back to true time), from the next
     * request on: a record written before a step forward of X looks X older to a client (its
     * {@code Date} against the record's {@code updated}), as it would on GCS after such a step.
     * How it is served through a {@code Date} the JDK stamps: {@link Adversary#stepClock}.
     */
    public void stepClock(Duration offset) {
        adversary.stepClock(offset);
    }

    /** How many requests were answered so far (for tests that want to see traffic). */
    public int requestCount() {
        return requests.get();
    }

    /**
     * Serves the next {@code count} {@code request}s on object {@code bucket/object} in full — a write
     * is applied, or refused, exactly as it would be — and then, instead of the answer, fails the
     * reply {@code how}: to the client, a request whose outcome is unknown. Each fault counts the
     * requests it matched, successful or not (a client's retry of a lost write is the next one).
     */
    public void loseReplies(Request request, String bucket, String object, int count, LostReply how) {
        lostReplies.arm(request, bucket, object, count, how);
    }

    /**
     * What the {@link Adversity} did so far: faults sent before anything was applied, faults sent
     * instead of the answer to an applied write, writes admitted within the write interval.
     */
    public record AdversityCounts(int faultsBefore, int faultsAfterWrite, int burstsAdmitted) {}

    public AdversityCounts adversityCounts() {
        return new AdversityCounts(adversary.faultsBefore(), adversary.faultsAfterWrite(), adversary.burstsAdmitted());
    }

    /** How many answers {@link #loseReplies} faults have lost so far. */
    public int lostReplyCount() {
        return lostReplies.lostSoFar();
    }

    /** Stops at once: open connections are dropped, new ones refused. */
    @Override
    public void close() {
        http.stop(0);
        executor.shutdownNow();
    }

    /**
     * Runs the server as a process: {@code GcsTestServer [--object-write-interval-ms=N] PORT_FILE
     * [BUCKET…]}. Listens on a free loopback port with the per-object write limit N ms (default
     * 1000; 0 turns it off), creates the buckets, then writes the port to PORT_FILE (atomically, so a
     * reader never sees half a number) and serves until killed.
     */
    public static void main(String[] args) throws Exception {
        Duration interval = DEFAULT_OBJECT_WRITE_INTERVAL;
        int first = 0;
        if (args.length > 0 && args[0].startsWith(WRITE_INTERVAL_FLAG)) {
            interval = Duration.ofMillis(Long.parseLong(args[0].substring(WRITE_INTERVAL_FLAG.length())));
            first = 1;
        }
        if (args.length <= first) {
            System.err.println("usage: java -cp lock-gcs/target/test-classes " + GcsTestServer.class.getName()
                    + " [" + WRITE_INTERVAL_FLAG + "1000] PORT_FILE [BUCKET...]");
            System.exit(2);
        }
        GcsTestServer server = start(0, interval);
        for (int k = first + 1; k < args.length; k++) server.createBucket(args[k]);
        Path portFile = Paths.get(args[first]).toAbsolutePath();
        Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
        Files.writeString(tmp, Integer.toString(server.port()) + "\n");
        Files.move(tmp, portFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        System.out.println("GCS test server listening on " + server.endpoint() + (interval.isZero()
                ? ", no per-object write limit" : ", at most one write per " + interval.toMillis() + " ms to one object name"));
        new CountDownLatch(1).await(); // serve until the process is killed
    }

    // ---------------------------------------------------------------- dispatch

    private void handle(HttpExchange ex) throws IOException {
        requests.incrementAndGet();
        try (ex) {
            Call call = new Call(ex);
            boolean write = isWrite(ex);
            Adversary.Fault fault = adversary.fault(write);
            Reply reply;
            try {
                byte[] body = Http.readBody(ex);
                adversary.authorize(ex.getRequestHeaders().getFirst("Authorization"), write,
                        write ? "storage.objects.create" : "storage.objects.get");
                if (fault != null && !fault.afterApply()) throw new GcsError(fault.code(), fault.reason(), "test server: chaos");
                reply = route(call, body);
            } catch (GcsError e) {
                reply = Reply.error(e.code, e.reason, e.getMessage());
            } catch (IllegalArgumentException e) {
                reply = Reply.error(400, "invalid", e.getMessage());
            } catch (RuntimeException e) {
                reply = Reply.error(500, "backendError", "test server bug: " + e);
            }
            if (fault != null) {
                adversary.sent(fault, fault.afterApply() && reply.code() < 300);
                if (fault.afterApply()) {
                    ex.getResponseHeaders().clear();
                    reply = Reply.error(fault.code(), fault.reason(), "test server: chaos after the request was served");
                }
            }
            if (call.lose == LostReply.CONNECTION_CLOSED) return; // closing an exchange that sent nothing drops the connection
            if (call.lose == LostReply.SERVICE_UNAVAILABLE) {
                ex.getResponseHeaders().clear();
                reply = Reply.error(503, "backendError", "test server: reply lost on purpose (the request was served)");
            }
            reply.send(ex);
        }
    }

    /** Whether a request changes an object (uploads, patches, deletes), by its method. */
    private static boolean isWrite(HttpExchange ex) {
        String override = ex.getRequestHeaders().getFirst("X-HTTP-Method-Override");
        String method = override != null ? override : ex.getRequestMethod();
        return !method.equalsIgnoreCase("GET") && !method.equalsIgnoreCase("HEAD");
    }

    private Reply route(Call call, byte[] body) throws IOException, GcsError {
        HttpExchange ex = call.ex;
        String method = ex.getRequestMethod().toUpperCase(Locale.ROOT);
        // HttpURLConnection cannot send PATCH: Google's clients POST with this header instead
        String override = ex.getRequestHeaders().getFirst("X-HTTP-Method-Override");
        if (override != null && method.equals("POST")) method = override.trim().toUpperCase(Locale.ROOT);
        List<String> seg = Http.pathSegments(ex.getRequestURI().getRawPath());
        Map<String, String> q = Http.query(ex.getRequestURI().getRawQuery());
        // /storage/v1/b[/{bucket}[/o[/{object}]]], /upload/storage/v1/b/{bucket}/o, /download/storage/v1/b/{bucket}/o/{object}
        String root;
        List<String> rest; // after the "storage/v1" API root
        if (seg.size() >= 3 && (seg.get(0).equals("upload") || seg.get(0).equals("download"))
                && seg.get(1).equals("storage") && seg.get(2).equals("v1")) {
            root = seg.get(0);
            rest = seg.subList(3, seg.size());
        } else if (seg.size() >= 2 && seg.get(0).equals("storage") && seg.get(1).equals("v1")) {
            root = "storage";
            rest = seg.subList(2, seg.size());
        } else {
            throw new GcsError(404, "notFound", "no such endpoint: " + method + " " + ex.getRequestURI().getRawPath());
        }
        if (rest.isEmpty() || !rest.get(0).equals("b")) {
            throw new GcsError(404, "notFound", "no such endpoint: " + method + " " + ex.getRequestURI().getRawPath());
        }
        if (root.equals("upload")) {
            if (rest.size() == 3 && rest.get(2).equals("o") && method.equals("POST")) {
                return upload(call, rest.get(1), q, body);
            }
        } else if (root.equals("download")) {
            if (rest.size() == 4 && rest.get(2).equals("o") && method.equals("GET")) {
                return getObject(call, rest.get(1), rest.get(3), q, true);
            }
        } else if (rest.size() == 1) {
            if (method.equals("POST")) return insertBucket(body);
        } else if (rest.size() == 2) {
            if (method.equals("GET")) return getBucket(rest.get(1));
        } else if (rest.size() == 3 && rest.get(2).equals("o")) {
            if (method.equals("GET")) return list(rest.get(1), q);
        } else if (rest.size() == 4 && rest.get(2).equals("o")) {
            return switch (method) {
                case "GET" -> getObject(call, rest.get(1), rest.get(3), q, "media".equals(q.get("alt")));
                case "PATCH", "PUT" -> patch(call, rest.get(1), rest.get(3), q, body, method.equals("PUT"));
                case "DELETE" -> delete(call, rest.get(1), rest.get(3), q);
                default -> throw new GcsError(405, "invalid", "method " + method + " not allowed here");
            };
        }
        throw new GcsError(404, "notFound", "no such endpoint: " + method + " " + ex.getRequestURI().getRawPath());
    }

    // ---------------------------------------------------------------- buckets

    private Reply insertBucket(byte[] body) throws GcsError {
        Map<String, Object> req = Http.jsonObject(body);
        Object name = req.get("name");
        if (!(name instanceof String n) || n.isEmpty()) throw new GcsError(400, "required", "bucket name required");
        Bucket b;
        synchronized (lock) {
            if (buckets.containsKey(n)) {
                throw new GcsError(409, "conflict", "Your previous request to create the named bucket succeeded and you already own it.");
            }
            b = new Bucket(n, adversary.storageNow(), new TreeMap<>());
            buckets.put(n, b);
        }
        return Reply.json(200, bucketJson(b));
    }

    private Reply getBucket(String name) throws GcsError {
        Bucket b;
        synchronized (lock) {
            b = bucket(name);
        }
        return Reply.json(200, bucketJson(b));
    }

    private Bucket bucket(String name) throws GcsError {
        Bucket b = buckets.get(name);
        if (b == null) throw new GcsError(404, "notFound", "The specified bucket does not exist.");
        return b;
    }

    private Map<String, Object> bucketJson(Bucket b) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", "storage#bucket");
        m.put("id", b.name());
        m.put("name", b.name());
        m.put("selfLink", "/storage/v1/b/" + b.name());
        m.put("projectNumber", "0");
        m.put("metageneration", "1");
        m.put("location", "US");
        m.put("storageClass", "STANDARD");
        m.put("etag", "CAE=");
        String created = StoredObject.RFC3339.format(b.created().minus(adversary.clockStep()));
        m.put("timeCreated", created);
        m.put("updated", created);
        return m;
    }

    // ---------------------------------------------------------------- objects

    private Reply upload(Call call, String bucketName, Map<String, String> q, byte[] body) throws GcsError {
        HttpExchange ex = call.ex;
        String type = q.getOrDefault("uploadType", "");
        Map<String, Object> meta;
        byte[] data;
        String contentType;
        if (type.equals("multipart")) {
            String ct = ex.getRequestHeaders().getFirst("Content-Type");
            List<Part> parts = Http.multipart(ct, body);
            if (parts.size() != 2) throw new GcsError(400, "invalid", "multipart upload needs 2 parts, got " + parts.size());
            meta = Http.jsonObject(parts.get(0).body());
            data = parts.get(1).body();
            contentType = meta.get("contentType") instanceof String s ? s
                    : parts.get(1).contentType() != null ? parts.get(1).contentType() : "application/octet-stream";
        } else if (type.equals("media")) {
            meta = new LinkedHashMap<>();
            data = body;
            String ct = ex.getRequestHeaders().getFirst("Content-Type");
            contentType = ct != null ? ct : "application/octet-stream";
        } else {
            throw new GcsError(400, "invalid", "uploadType '" + type + "' is not supported by the test server (multipart, media)");
        }
        String name = q.containsKey("name") ? q.get("name") : meta.get("name") instanceof String s ? s : null;
        if (name == null || name.isEmpty()) throw new GcsError(400, "required", "Required: object name");
        call.on(Request.UPLOAD, bucketName, name);
        verifyHashes(meta, data);
        Map<String, String> userMeta = new LinkedHashMap<>();
        if (meta.get("metadata") instanceof Map<?, ?> m) {
            m.forEach((k, v) -> {
                if (v != null) userMeta.put(k.toString(), v.toString());
            });
        }
        StoredObject o;
        synchronized (lock) {
            Bucket b = bucket(bucketName);
            StoredObject live = b.objects().get(name);
            if (adversary.checksPreconditions()) StoredObject.checkPreconditions(live, q, false);
            rateLimit.admit(bucketName, name);
            Instant now = adversary.storageNow();
            o = new StoredObject(bucketName, name, adversary.generation(nextGeneration(now)), 1, data, contentType, userMeta, now, now);
            b.objects().put(name, o);
        }
        return Reply.json(200, json(o));
    }

    private Reply getObject(Call call, String bucketName, String name, Map<String, String> q, boolean media)
            throws GcsError {
        call.on(Request.GET, bucketName, name);
        StoredObject o;
        synchronized (lock) {
            o = live(bucketName, name, q);
            StoredObject.checkPreconditions(o, q, true);
        }
        if (!media) return Reply.json(200, json(o));
        Headers h = call.ex.getResponseHeaders();
        h.set("x-goog-generation", Long.toString(o.generation()));
        h.set("x-goog-metageneration", Long.toString(o.metageneration()));
        h.set("x-goog-stored-content-length", Integer.toString(o.data().length));
        h.set("x-goog-stored-content-encoding", "identity");
        h.set("x-goog-hash", "crc32c=" + Http.crc32c(o.data()) + ",md5=" + Http.md5(o.data()));
        h.set("ETag", o.etag());
        h.set("Last-Modified", Http.HTTP_DATE.format(o.updated().minus(adversary.clockStep())));
        byte[] data = o.data();
        int from = 0;
        int to = data.length - 1;
        String range = call.ex.getRequestHeaders().getFirst("Range");
        boolean partial = false;
        if (range != null && range.startsWith("bytes=") && !range.contains(",")) {
            String[] fromTo = range.substring(6).split("-", -1);
            if (!fromTo[0].isEmpty()) {
                from = Integer.parseInt(fromTo[0].trim());
                if (!fromTo[1].isEmpty()) to = Math.min(to, Integer.parseInt(fromTo[1].trim()));
            } else if (!fromTo[1].isEmpty()) {
                from = Math.max(0, data.length - Integer.parseInt(fromTo[1].trim()));
            }
            if (from >= data.length && data.length > 0) {
                h.set("Content-Range", "bytes */" + data.length);
                throw new GcsError(416, "requestedRangeNotSatisfiable", "The requested range cannot be satisfied.");
            }
            partial = from > 0 || to < data.length - 1;
            if (partial) h.set("Content-Range", "bytes " + from + "-" + to + "/" + data.length);
        }
        byte[] out = data.length == 0 ? data : Arrays.copyOfRange(data, from, to + 1);
        return Reply.bytes(partial ? 206 : 200, o.contentType(), out);
    }

    private Reply patch(Call call, String bucketName, String name, Map<String, String> q, byte[] body, boolean replaceAll)
            throws GcsError {
        call.on(Request.PATCH, bucketName, name);
        Map<String, Object> req = Http.jsonObject(body);
        StoredObject o;
        synchronized (lock) {
            Bucket b = bucket(bucketName);
            StoredObject cur = live(bucketName, name, q);
            if (adversary.checksPreconditions()) StoredObject.checkPreconditions(cur, q, false);
            rateLimit.admit(bucketName, name);
            Map<String, String> meta = replaceAll ? new LinkedHashMap<>() : new LinkedHashMap<>(cur.metadata());
            if (req.get("metadata") instanceof Map<?, ?> m) {
                m.forEach((k, v) -> {
                    if (v == null) meta.remove(k.toString());
                    else meta.put(k.toString(), v.toString());
                });
            } else if (req.containsKey("metadata") && req.get("metadata") == null) {
                meta.clear();
            }
            String contentType = req.get("contentType") instanceof String s ? s : cur.contentType();
            o = new StoredObject(cur.bucket(), cur.name(), cur.generation(), cur.metageneration() + 1, cur.data(),
                    contentType, meta, cur.created(), adversary.storageNow());
            b.objects().put(name, o);
        }
        return Reply.json(200, json(o));
    }

    private Reply delete(Call call, String bucketName, String name, Map<String, String> q) throws GcsError {
        call.on(Request.DELETE, bucketName, name);
        synchronized (lock) {
            Bucket b = bucket(bucketName);
            StoredObject cur = live(bucketName, name, q);
            if (adversary.checksPreconditions()) StoredObject.checkPreconditions(cur, q, false);
            rateLimit.admit(bucketName, name);
            b.objects().remove(name);
        }
        return Reply.empty(204);
    }

    private Reply list(String bucketName, Map<String, String> q) throws GcsError {
        if (q.containsKey("delimiter")) throw new GcsError(400, "invalid", "delimiter is not supported by the test server");
        String prefix = q.getOrDefault("prefix", "");
        int max = q.containsKey("maxResults") ? Math.max(1, Math.min(MAX_LIST_PAGE, Integer.parseInt(q.get("maxResults")))) : MAX_LIST_PAGE;
        String after = q.get("pageToken");
        List<Object> items = new ArrayList<>();
        String next = null;
        synchronized (lock) {
            Bucket b = bucket(bucketName);
            // page tokens are the last name of the previous page: pages stay consistent under writes
            var tail = after != null ? b.objects().tailMap(after, false) : b.objects().tailMap(prefix, true);
            for (StoredObject o : tail.values()) {
                if (!o.name().startsWith(prefix)) {
                    if (o.name().compareTo(prefix) > 0) break;
                    continue;
                }
                if (items.size() == max) {
                    next = ((String) ((Map<?, ?>) items.get(items.size() - 1)).get("name"));
                    break;
                }
                items.add(json(o));
            }
        }
        Map<String, Object> resp = new LinkedHashMap<>();
        resp.put("kind", "storage#objects");
        if (next != null) resp.put("nextPageToken", next);
        resp.put("items", items);
        return Reply.json(200, resp);
    }

    private Map<String, Object> json(StoredObject o) {
        return o.json(endpoint(), adversary.clockStep());
    }

    /** The live object, honouring a {@code generation=} selector (only the live generation exists). */
    private StoredObject live(String bucketName, String name, Map<String, String> q) throws GcsError {
        StoredObject o = bucket(bucketName).objects().get(name);
        if (o == null) throw new GcsError(404, "notFound", "No such object: " + bucketName + "/" + name);
        String gen = q.get("generation");
        if (gen != null && !gen.isEmpty() && Http.parseLong(gen, "generation") != o.generation()) {
            throw new GcsError(404, "notFound", "No such object: " + bucketName + "/" + name + "#" + gen);
        }
        return o;
    }

    /** Strictly increasing across the server: microseconds of the clock, or one more than the last. */
    private long nextGeneration(Instant now) {
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        lastGeneration = Math.max(lastGeneration + 1, micros);
        return lastGeneration;
    }

    private static void verifyHashes(Map<String, Object> meta, byte[] data) throws GcsError {
        if (meta.get("md5Hash") instanceof String md5 && !md5.equals(Http.md5(data))) {
            throw new GcsError(400, "invalid", "Provided MD5 hash \"" + md5 + "\" doesn't match calculated MD5 hash \"" + Http.md5(data) + "\".");
        }
        if (meta.get("crc32c") instanceof String crc && !crc.equals(Http.crc32c(data))) {
            throw new GcsError(400, "invalid", "Provided CRC32C \"" + crc + "\" doesn't match calculated CRC32C \"" + Http.crc32c(data) + "\".");
        }
    }

}
