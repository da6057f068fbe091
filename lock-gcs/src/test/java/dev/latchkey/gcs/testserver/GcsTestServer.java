package dev.latchkey.gcs.testserver;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
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
import java.util.zip.CRC32C;
import java.util.zip.GZIPInputStream;

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
 *   <li>generations are strictly increasing per object name — drawn from one server-wide counter,
 *       never reused, not even after a delete (GCS uses microsecond timestamps; so does this server
 *       where the clock allows);</li>
 *   <li>errors have GCS's JSON shape ({@code {"error":{"code":412,"errors":[{"reason":…}]}}}) so
 *       the Java client raises exactly what it raises against GCS;</li>
 *   <li>request bodies with {@code Content-Encoding: gzip} are accepted (the Java client gzips
 *       uploads); {@code md5Hash}/{@code crc32c} sent with an upload are verified;</li>
 *   <li>every response carries a {@code Date} header; object times are the server's clock.</li>
 * </ul>
 * No object versioning, no ACLs, no authentication (any or no credentials are accepted).
 * State lives in memory and is gone when the server stops.
 *
 * <p>Start in-process with {@link #start()} (port 0) or as a process with {@link #main}.
 */
public final class GcsTestServer implements AutoCloseable {
    static {
        // Without it the JDK server waits for delayed ACKs (Nagle): ~40 ms per request. Read once,
        // when the first HttpServer of the JVM is made, so it must be set before that.
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    private static final DateTimeFormatter RFC3339 =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    private static final int MAX_LIST_PAGE = 1000;

    private final HttpServer http;
    private final ExecutorService executor;
    /** One lock for all state: every precondition check and the write it guards happen under it. */
    private final Object lock = new Object();
    private final Map<String, Bucket> buckets = new HashMap<>();
    private long lastGeneration;
    private final AtomicInteger requests = new AtomicInteger();

    private record Bucket(String name, Instant created, TreeMap<String, StoredObject> objects) {}

    private record StoredObject(String bucket, String name, long generation, long metageneration, byte[] data,
                                String contentType, Map<String, String> metadata, Instant created, Instant updated) {}

    /** An answer that is not 2xx, with GCS's error reason. */
    private static final class GcsError extends Exception {
        private static final long serialVersionUID = 1L;
        final int code;
        final String reason;

        GcsError(int code, String reason, String message) {
            super(message, null, false, false);
            this.code = code;
            this.reason = reason;
        }
    }

    private GcsTestServer(InetSocketAddress address) throws IOException {
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

    /** Starts a server on {@code 127.0.0.1} on a free port. */
    public static GcsTestServer start() {
        return start(0);
    }

    /** Starts a server on {@code 127.0.0.1:port} ({@code 0} = a free port). */
    public static GcsTestServer start(int port) {
        try {
            GcsTestServer s = new GcsTestServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
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
            buckets.computeIfAbsent(name, n -> new Bucket(n, Instant.now(), new TreeMap<>()));
        }
    }

    /** How many requests were answered so far (for tests that want to see traffic). */
    public int requestCount() {
        return requests.get();
    }

    /** Stops at once: open connections are dropped, new ones refused. */
    @Override
    public void close() {
        http.stop(0);
        executor.shutdownNow();
    }

    /**
     * Runs the server as a process: {@code GcsTestServer PORT_FILE [BUCKET…]}. Listens on a free
     * loopback port, creates the buckets, then writes the port to PORT_FILE (atomically, so a reader
     * never sees half a number) and serves until killed.
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: java -cp lock-gcs/target/test-classes " + GcsTestServer.class.getName()
                    + " PORT_FILE [BUCKET...]");
            System.exit(2);
        }
        GcsTestServer server = start(0);
        for (int k = 1; k < args.length; k++) server.createBucket(args[k]);
        Path portFile = Paths.get(args[0]).toAbsolutePath();
        Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
        Files.writeString(tmp, Integer.toString(server.port()) + "\n");
        Files.move(tmp, portFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        System.out.println("GCS test server listening on " + server.endpoint());
        new CountDownLatch(1).await(); // serve until the process is killed
    }

    // ---------------------------------------------------------------- dispatch

    private void handle(HttpExchange ex) throws IOException {
        requests.incrementAndGet();
        try (ex) {
            try {
                byte[] body = readBody(ex);
                route(ex, body);
            } catch (GcsError e) {
                sendError(ex, e.code, e.reason, e.getMessage());
            } catch (IllegalArgumentException e) {
                sendError(ex, 400, "invalid", e.getMessage());
            } catch (RuntimeException e) {
                sendError(ex, 500, "backendError", "test server bug: " + e);
            }
        }
    }

    private void route(HttpExchange ex, byte[] body) throws IOException, GcsError {
        String method = ex.getRequestMethod().toUpperCase(Locale.ROOT);
        // HttpURLConnection cannot send PATCH: Google's clients POST with this header instead
        String override = ex.getRequestHeaders().getFirst("X-HTTP-Method-Override");
        if (override != null && method.equals("POST")) method = override.trim().toUpperCase(Locale.ROOT);
        List<String> seg = pathSegments(ex.getRequestURI().getRawPath());
        Map<String, String> q = query(ex.getRequestURI().getRawQuery());
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
                upload(ex, rest.get(1), q, body);
                return;
            }
        } else if (root.equals("download")) {
            if (rest.size() == 4 && rest.get(2).equals("o") && method.equals("GET")) {
                getObject(ex, rest.get(1), rest.get(3), q, true);
                return;
            }
        } else if (rest.size() == 1) {
            if (method.equals("POST")) {
                insertBucket(ex, body);
                return;
            }
        } else if (rest.size() == 2) {
            if (method.equals("GET")) {
                getBucket(ex, rest.get(1));
                return;
            }
        } else if (rest.size() == 3 && rest.get(2).equals("o")) {
            if (method.equals("GET")) {
                list(ex, rest.get(1), q);
                return;
            }
        } else if (rest.size() == 4 && rest.get(2).equals("o")) {
            switch (method) {
                case "GET" -> getObject(ex, rest.get(1), rest.get(3), q, "media".equals(q.get("alt")));
                case "PATCH", "PUT" -> patch(ex, rest.get(1), rest.get(3), q, body, method.equals("PUT"));
                case "DELETE" -> delete(ex, rest.get(1), rest.get(3), q);
                default -> throw new GcsError(405, "invalid", "method " + method + " not allowed here");
            }
            return;
        }
        throw new GcsError(404, "notFound", "no such endpoint: " + method + " " + ex.getRequestURI().getRawPath());
    }

    // ---------------------------------------------------------------- buckets

    private void insertBucket(HttpExchange ex, byte[] body) throws IOException, GcsError {
        Map<String, Object> req = jsonObject(body);
        Object name = req.get("name");
        if (!(name instanceof String n) || n.isEmpty()) throw new GcsError(400, "required", "bucket name required");
        Bucket b;
        synchronized (lock) {
            if (buckets.containsKey(n)) {
                throw new GcsError(409, "conflict", "Your previous request to create the named bucket succeeded and you already own it.");
            }
            b = new Bucket(n, Instant.now(), new TreeMap<>());
            buckets.put(n, b);
        }
        sendJson(ex, 200, bucketJson(b));
    }

    private void getBucket(HttpExchange ex, String name) throws IOException, GcsError {
        Bucket b;
        synchronized (lock) {
            b = bucket(name);
        }
        sendJson(ex, 200, bucketJson(b));
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
        m.put("timeCreated", RFC3339.format(b.created()));
        m.put("updated", RFC3339.format(b.created()));
        return m;
    }

    // ---------------------------------------------------------------- objects

    private void upload(HttpExchange ex, String bucketName, Map<String, String> q, byte[] body) throws IOException, GcsError {
        String type = q.getOrDefault("uploadType", "");
        Map<String, Object> meta;
        byte[] data;
        String contentType;
        if (type.equals("multipart")) {
            String ct = ex.getRequestHeaders().getFirst("Content-Type");
            List<Part> parts = multipart(ct, body);
            if (parts.size() != 2) throw new GcsError(400, "invalid", "multipart upload needs 2 parts, got " + parts.size());
            meta = jsonObject(parts.get(0).body());
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
            checkPreconditions(live, q, false);
            Instant now = Instant.now();
            o = new StoredObject(bucketName, name, nextGeneration(now), 1, data, contentType, userMeta, now, now);
            b.objects().put(name, o);
        }
        sendJson(ex, 200, objectJson(o));
    }

    private void getObject(HttpExchange ex, String bucketName, String name, Map<String, String> q, boolean media)
            throws IOException, GcsError {
        StoredObject o;
        synchronized (lock) {
            o = live(bucketName, name, q);
            checkPreconditions(o, q, true);
        }
        if (!media) {
            sendJson(ex, 200, objectJson(o));
            return;
        }
        Headers h = ex.getResponseHeaders();
        h.set("Content-Type", o.contentType());
        h.set("x-goog-generation", Long.toString(o.generation()));
        h.set("x-goog-metageneration", Long.toString(o.metageneration()));
        h.set("x-goog-stored-content-length", Integer.toString(o.data().length));
        h.set("x-goog-stored-content-encoding", "identity");
        h.set("x-goog-hash", "crc32c=" + crc32c(o.data()) + ",md5=" + md5(o.data()));
        h.set("ETag", etag(o));
        h.set("Last-Modified", HTTP_DATE.format(o.updated()));
        byte[] data = o.data();
        int from = 0;
        int to = data.length - 1;
        String range = ex.getRequestHeaders().getFirst("Range");
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
        byte[] out = data.length == 0 ? data : java.util.Arrays.copyOfRange(data, from, to + 1);
        send(ex, partial ? 206 : 200, out);
    }

    private void patch(HttpExchange ex, String bucketName, String name, Map<String, String> q, byte[] body, boolean replaceAll)
            throws IOException, GcsError {
        Map<String, Object> req = jsonObject(body);
        StoredObject o;
        synchronized (lock) {
            Bucket b = bucket(bucketName);
            StoredObject cur = live(bucketName, name, q);
            checkPreconditions(cur, q, false);
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
                    contentType, meta, cur.created(), Instant.now());
            b.objects().put(name, o);
        }
        sendJson(ex, 200, objectJson(o));
    }

    private void delete(HttpExchange ex, String bucketName, String name, Map<String, String> q) throws IOException, GcsError {
        synchronized (lock) {
            Bucket b = bucket(bucketName);
            StoredObject cur = live(bucketName, name, q);
            checkPreconditions(cur, q, false);
            b.objects().remove(name);
        }
        send(ex, 204, null);
    }

    private void list(HttpExchange ex, String bucketName, Map<String, String> q) throws IOException, GcsError {
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
                items.add(objectJson(o));
            }
        }
        Map<String, Object> resp = new LinkedHashMap<>();
        resp.put("kind", "storage#objects");
        if (next != null) resp.put("nextPageToken", next);
        resp.put("items", items);
        sendJson(ex, 200, resp);
    }

    /** The live object, honouring a {@code generation=} selector (only the live generation exists). */
    private StoredObject live(String bucketName, String name, Map<String, String> q) throws GcsError {
        StoredObject o = bucket(bucketName).objects().get(name);
        if (o == null) throw new GcsError(404, "notFound", "No such object: " + bucketName + "/" + name);
        String gen = q.get("generation");
        if (gen != null && !gen.isEmpty() && parseLong(gen, "generation") != o.generation()) {
            throw new GcsError(404, "notFound", "No such object: " + bucketName + "/" + name + "#" + gen);
        }
        return o;
    }

    /**
     * GCS's preconditions against the live object ({@code null} if none). Must run under
     * {@link #lock} together with the write it guards. For reads, a failed {@code …NotMatch} is a
     * 304 as on GCS; everything else that fails is 412.
     */
    private static void checkPreconditions(StoredObject live, Map<String, String> q, boolean read) throws GcsError {
        String gm = q.get("ifGenerationMatch");
        if (gm != null) {
            long want = parseLong(gm, "ifGenerationMatch");
            long have = live == null ? 0 : live.generation();
            if (want != have) throw conditionNotMet("ifGenerationMatch");
        }
        String gnm = q.get("ifGenerationNotMatch");
        if (gnm != null) {
            long notWant = parseLong(gnm, "ifGenerationNotMatch");
            long have = live == null ? 0 : live.generation();
            if (notWant == have) {
                if (read) throw new GcsError(304, "notModified", "Not Modified");
                throw conditionNotMet("ifGenerationNotMatch");
            }
        }
        String mm = q.get("ifMetagenerationMatch");
        if (mm != null && (live == null || live.metageneration() != parseLong(mm, "ifMetagenerationMatch"))) {
            throw conditionNotMet("ifMetagenerationMatch");
        }
        String mnm = q.get("ifMetagenerationNotMatch");
        if (mnm != null && live != null && live.metageneration() == parseLong(mnm, "ifMetagenerationNotMatch")) {
            if (read) throw new GcsError(304, "notModified", "Not Modified");
            throw conditionNotMet("ifMetagenerationNotMatch");
        }
    }

    private static GcsError conditionNotMet(String which) {
        return new GcsError(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold. (" + which + ")");
    }

    /** Strictly increasing across the server: microseconds of the clock, or one more than the last. */
    private long nextGeneration(Instant now) {
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        lastGeneration = Math.max(lastGeneration + 1, micros);
        return lastGeneration;
    }

    private static void verifyHashes(Map<String, Object> meta, byte[] data) throws GcsError {
        if (meta.get("md5Hash") instanceof String md5 && !md5.equals(md5(data))) {
            throw new GcsError(400, "invalid", "Provided MD5 hash \"" + md5 + "\" doesn't match calculated MD5 hash \"" + md5(data) + "\".");
        }
        if (meta.get("crc32c") instanceof String crc && !crc.equals(crc32c(data))) {
            throw new GcsError(400, "invalid", "Provided CRC32C \"" + crc + "\" doesn't match calculated CRC32C \"" + crc32c(data) + "\".");
        }
    }

    private Map<String, Object> objectJson(StoredObject o) {
        Map<String, Object> m = new LinkedHashMap<>();
        String enc = encodeSegment(o.name());
        m.put("kind", "storage#object");
        m.put("id", o.bucket() + "/" + o.name() + "/" + o.generation());
        m.put("selfLink", endpoint() + "/storage/v1/b/" + o.bucket() + "/o/" + enc);
        m.put("mediaLink", endpoint() + "/download/storage/v1/b/" + o.bucket() + "/o/" + enc
                + "?generation=" + o.generation() + "&alt=media");
        m.put("name", o.name());
        m.put("bucket", o.bucket());
        m.put("generation", Long.toString(o.generation()));
        m.put("metageneration", Long.toString(o.metageneration()));
        m.put("contentType", o.contentType());
        m.put("storageClass", "STANDARD");
        m.put("size", Integer.toString(o.data().length));
        m.put("md5Hash", md5(o.data()));
        m.put("crc32c", crc32c(o.data()));
        m.put("etag", etag(o));
        m.put("timeCreated", RFC3339.format(o.created()));
        m.put("updated", RFC3339.format(o.updated()));
        m.put("timeStorageClassUpdated", RFC3339.format(o.created()));
        if (!o.metadata().isEmpty()) m.put("metadata", new LinkedHashMap<>(o.metadata()));
        return m;
    }

    private static String etag(StoredObject o) {
        return Base64.getEncoder().encodeToString((o.generation() + "/" + o.metageneration()).getBytes(StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- HTTP plumbing

    private static byte[] readBody(HttpExchange ex) throws IOException {
        // read it all before answering: the JDK server cannot reuse a connection with unread input
        byte[] raw;
        try (InputStream in = ex.getRequestBody()) {
            raw = in.readAllBytes();
        }
        String enc = ex.getRequestHeaders().getFirst("Content-Encoding");
        if (enc != null && enc.trim().equalsIgnoreCase("gzip") && raw.length > 0) {
            try (InputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(raw))) {
                return in.readAllBytes();
            }
        }
        return raw;
    }

    private static Map<String, Object> jsonObject(byte[] body) {
        if (body.length == 0) return new LinkedHashMap<>();
        Object v = Json.parse(new String(body, StandardCharsets.UTF_8));
        if (!(v instanceof Map<?, ?>)) throw new IllegalArgumentException("expected a JSON object");
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) v;
        return m;
    }

    private static void sendJson(HttpExchange ex, int code, Map<String, Object> json) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
        send(ex, code, Json.write(json).getBytes(StandardCharsets.UTF_8));
    }

    private static void sendError(HttpExchange ex, int code, String reason, String message) throws IOException {
        if (code == 304) {
            send(ex, 304, null);
            return;
        }
        Map<String, Object> detail = new LinkedHashMap<>();
        detail.put("message", message);
        detail.put("domain", "global");
        detail.put("reason", reason);
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        error.put("errors", List.of(detail));
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("error", error);
        sendJson(ex, code, root);
    }

    private static void send(HttpExchange ex, int code, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Date", HTTP_DATE.format(Instant.now()));
        if (body == null || code == 204 || code == 304) {
            ex.sendResponseHeaders(code, -1);
            return;
        }
        ex.sendResponseHeaders(code, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private record Part(String contentType, byte[] body) {}

    /** Splits a {@code multipart/related} body into its parts (headers, then bytes). */
    private static List<Part> multipart(String contentType, byte[] body) throws GcsError {
        String boundary = null;
        if (contentType != null) {
            for (String p : contentType.split(";")) {
                String t = p.trim();
                if (t.toLowerCase(Locale.ROOT).startsWith("boundary=")) {
                    boundary = t.substring(9);
                    if (boundary.startsWith("\"") && boundary.endsWith("\"")) boundary = boundary.substring(1, boundary.length() - 1);
                }
            }
        }
        if (boundary == null) throw new GcsError(400, "invalid", "multipart upload without a boundary");
        byte[] delim = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        List<Part> parts = new ArrayList<>();
        int pos = indexOf(body, delim, 0);
        if (pos < 0) throw new GcsError(400, "invalid", "multipart body without its boundary");
        while (true) {
            int lineEnd = pos + delim.length;
            if (lineEnd + 1 < body.length && body[lineEnd] == '-' && body[lineEnd + 1] == '-') break; // closing
            int headersStart = skipEol(body, lineEnd);
            int headersEnd = indexOf(body, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), headersStart);
            int sepLen = 4;
            if (headersEnd < 0) {
                headersEnd = indexOf(body, "\n\n".getBytes(StandardCharsets.ISO_8859_1), headersStart);
                sepLen = 2;
            }
            if (headersEnd < 0) throw new GcsError(400, "invalid", "malformed multipart part");
            String headers = new String(body, headersStart, headersEnd - headersStart, StandardCharsets.ISO_8859_1);
            int dataStart = headersEnd + sepLen;
            int next = indexOf(body, delim, dataStart);
            if (next < 0) throw new GcsError(400, "invalid", "multipart body not closed");
            int dataEnd = next;
            if (dataEnd > dataStart && body[dataEnd - 1] == '\n') dataEnd--;
            if (dataEnd > dataStart && body[dataEnd - 1] == '\r') dataEnd--;
            String partType = null;
            for (String h : headers.split("\r?\n")) {
                int c = h.indexOf(':');
                if (c > 0 && h.substring(0, c).trim().equalsIgnoreCase("Content-Type")) partType = h.substring(c + 1).trim();
            }
            parts.add(new Part(partType, java.util.Arrays.copyOfRange(body, dataStart, dataEnd)));
            pos = next;
        }
        return parts;
    }

    private static int skipEol(byte[] b, int i) {
        if (i < b.length && b[i] == '\r') i++;
        if (i < b.length && b[i] == '\n') i++;
        return i;
    }

    private static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = Math.max(0, from); i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) continue outer;
            }
            return i;
        }
        return -1;
    }

    /** Path segments, each percent-decoded ({@code %2F} inside an object name stays part of it). */
    private static List<String> pathSegments(String rawPath) {
        List<String> out = new ArrayList<>();
        for (String s : rawPath.split("/")) {
            if (!s.isEmpty()) out.add(percentDecode(s, false));
        }
        return out;
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> m = new HashMap<>();
        if (raw == null || raw.isEmpty()) return m;
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            String k = percentDecode(eq >= 0 ? pair.substring(0, eq) : pair, true);
            String v = eq >= 0 ? percentDecode(pair.substring(eq + 1), true) : "";
            m.put(k, v);
        }
        return m;
    }

    private static String percentDecode(String s, boolean plusIsSpace) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length()) {
                out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else if (c == '+' && plusIsSpace) {
                out.write(' ');
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                out.write(b, 0, b.length);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String encodeSegment(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                sb.append((char) c);
            } else {
                sb.append('%').append(String.format("%02X", c));
            }
        }
        return sb.toString();
    }

    private static long parseLong(String v, String what) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Invalid argument for " + what + ": '" + v + "'");
        }
    }

    private static String md5(byte[] data) {
        try {
            return Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String crc32c(byte[] data) {
        CRC32C c = new CRC32C();
        c.update(data);
        return Base64.getEncoder().encodeToString(ByteBuffer.allocate(4).putInt((int) c.getValue()).array());
    }
}
