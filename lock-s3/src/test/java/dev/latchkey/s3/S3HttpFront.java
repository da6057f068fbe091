package dev.latchkey.s3;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback HTTP/1.1 front for the real S3 test server, for the answers S3Proxy never gives by
 * itself: throttling, conflicts, server errors, a clock that runs ahead. Clients use {@link #uri()}
 * (the server's URI with {@code endpoint} pointing here).
 *
 * <p><b>What it does.</b> Every request is forwarded byte for byte (the signature covers the
 * {@code Host} header, which names the front on both ends), each on a connection of its own, and
 * the server's reply is passed back unchanged but for {@code Connection: close} — except where a
 * rule armed for the request's {@link Kind} says otherwise, each rule applying to one request, in
 * the order armed:
 * <ul>
 *   <li>{@link #refuse}: the front answers with an S3 error itself; <em>nothing reaches the
 *       server</em> (a throttled or conflicting request);</li>
 *   <li>{@link #failAfterLanding}: the request reaches the server, and its reply is replaced by an S3
 *       error (a write that landed, answered by a failing node).</li>
 * </ul>
 * {@link #shiftDate} moves the {@code Date} header of every reply (a node whose clock is off, while
 * {@code Last-Modified} still comes from the node that stored the object).
 *
 * <p>Counts the requests of each kind it saw, so tests can tell how often the SDK retried, and logs
 * when it read each conditional write it passed on and what the server said ({@link #forwardedWrites}),
 * so a test can tell which writes landed, and when they were sent at the latest. When the server is
 * gone (refuses or drops the connection), the client's connection is reset, as the server's would
 * be. Any other failure of the front itself is kept and thrown by {@link #close()}, so a broken front
 * fails its test instead of passing it.
 */
final class S3HttpFront implements AutoCloseable {

    /** What a request does, as the rules and counters see it. */
    enum Kind {
        /** {@code PUT} or {@code DELETE} with {@code If-Match} or {@code If-None-Match}. */
        CONDITIONAL_WRITE,
        /** {@code GET} or {@code HEAD}. */
        READ,
        OTHER
    }

    private record Rule(boolean forward, int status, String code) {}

    /**
     * A conditional write the front passed to the server: when the front had read it
     * ({@link System#nanoTime()}, after the client sent it and before the server got it), and the
     * server's status, or {@code -1} if the server took the request but never replied (it went
     * away: the write may have landed). Writes the server refused to connect for are not logged.
     */
    record ForwardedWrite(long receivedNanos, int status) {
        boolean landed() {
            return status >= 200 && status < 300;
        }

        boolean mayHaveLanded() {
            return status < 0 || landed();
        }
    }

    private static final DateTimeFormatter HTTP_DATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
    private static final byte[] END_OF_HEAD = {'\r', '\n', '\r', '\n'};
    private static final int MAX_HEAD_BYTES = 64 * 1024;
    private static final int SOCKET_TIMEOUT_MS = 60_000;

    private final String upstreamHost;
    private final int upstreamPort;
    private final String uri;
    private final ServerSocket listener;
    private final ExecutorService connections = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "s3-http-front");
        t.setDaemon(true);
        return t;
    });
    private final Map<Kind, Deque<Rule>> rules = new EnumMap<>(Kind.class);
    private final Map<Kind, AtomicInteger> seen = new EnumMap<>(Kind.class);
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final List<ForwardedWrite> forwardedWrites = new CopyOnWriteArrayList<>();
    private volatile Duration dateShift = Duration.ZERO;
    private volatile boolean closed;

    private S3HttpFront(String serverUri) throws IOException {
        URI endpoint = URI.create(LockUri.parse(serverUri).param("endpoint").orElseThrow());
        if (!"http".equals(endpoint.getScheme())) throw new IllegalArgumentException("plain http only: " + endpoint);
        this.upstreamHost = endpoint.getHost();
        this.upstreamPort = endpoint.getPort();
        for (Kind k : Kind.values()) {
            rules.put(k, new ArrayDeque<>());
            seen.put(k, new AtomicInteger());
        }
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.uri = ExternalServer.withParam(serverUri, "endpoint", "http://127.0.0.1:" + listener.getLocalPort());
        Thread accept = new Thread(this::acceptLoop, "s3-http-front-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** A front for the server of {@code serverUri} (an {@code s3://} URI with an http {@code endpoint}). */
    static S3HttpFront before(String serverUri) throws IOException {
        return new S3HttpFront(serverUri);
    }

    /** {@code serverUri} with its endpoint pointing at this front. */
    String uri() {
        return uri;
    }

    /** The next {@code times} requests of {@code kind} are answered here with {@code status}/{@code code}. */
    synchronized S3HttpFront refuse(Kind kind, int times, int status, String code) {
        for (int i = 0; i < times; i++) rules.get(kind).add(new Rule(false, status, code));
        return this;
    }

    /** The next {@code times} requests of {@code kind} reach the server; their replies become {@code status}/{@code code}. */
    synchronized S3HttpFront failAfterLanding(Kind kind, int times, int status, String code) {
        for (int i = 0; i < times; i++) rules.get(kind).add(new Rule(true, status, code));
        return this;
    }

    /** Every reply from now on carries a {@code Date} moved by {@code shift}. */
    S3HttpFront shiftDate(Duration shift) {
        this.dateShift = shift;
        return this;
    }

    /** Requests of {@code kind} that reached the front so far. */
    int seen(Kind kind) {
        return seen.get(kind).get();
    }

    /** The conditional writes passed to the server so far, in the order the front read them. */
    List<ForwardedWrite> forwardedWrites() {
        return List.copyOf(forwardedWrites);
    }

    /** Rules armed and not yet used. */
    synchronized int pending() {
        return rules.values().stream().mapToInt(Deque::size).sum();
    }

    /** Stops the front; throws if the front itself failed while it ran. */
    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        connections.shutdownNow();
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("the S3 HTTP front failed " + failures.size() + " time(s)", failures.get(0));
            failures.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                connections.execute(() -> serve(client));
            } catch (IOException e) {
                if (!closed) failures.add(e);
                return;
            }
        }
    }

    /** One request on one connection: read it, forward or answer it, close. */
    private void serve(Socket client) {
        try (client) {
            client.setSoTimeout(SOCKET_TIMEOUT_MS);
            InputStream in = new BufferedInputStream(client.getInputStream());
            byte[] head = readHead(in);
            if (head == null) return; // a connection opened and closed without a request
            long received = System.nanoTime();
            String headText = new String(head, ISO_8859_1);
            String method = headText.substring(0, headText.indexOf(' '));
            if (header(headText, "transfer-encoding") != null) {
                throw new IllegalStateException("chunked request bodies are not supported: " + firstLine(headText));
            }
            String length = header(headText, "content-length");
            byte[] body = in.readNBytes(length == null ? 0 : Integer.parseInt(length.trim()));
            Kind kind = kind(method, headText);
            seen.get(kind).incrementAndGet();
            Rule rule;
            synchronized (this) {
                rule = rules.get(kind).poll();
            }
            byte[] reply = null;
            if (rule == null || rule.forward()) {
                byte[] answer;
                try {
                    answer = forward(head, body);
                } catch (ServerGone gone) {
                    if (kind == Kind.CONDITIONAL_WRITE && gone.reached) forwardedWrites.add(new ForwardedWrite(received, -1));
                    client.setSoLinger(true, 0); // reset the client's connection, as a dead server's would be
                    return;
                }
                if (kind == Kind.CONDITIONAL_WRITE) forwardedWrites.add(new ForwardedWrite(received, status(answer)));
                if (rule == null) reply = rewriteReply(answer);
            }
            if (rule != null) reply = error(rule, method);
            OutputStream out = client.getOutputStream();
            out.write(reply);
            out.flush();
        } catch (SocketException e) {
            // the client gave up on this connection (its own timeout): nothing left to answer
        } catch (IOException | RuntimeException e) { // incl. UncheckedIOException from forward()
            if (!closed) failures.add(e);
        }
    }

    private static Kind kind(String method, String head) {
        boolean conditional = header(head, "if-match") != null || header(head, "if-none-match") != null;
        if (conditional && (method.equals("PUT") || method.equals("DELETE"))) return Kind.CONDITIONAL_WRITE;
        if (method.equals("GET") || method.equals("HEAD")) return Kind.READ;
        return Kind.OTHER;
    }

    /** The server refused the connection or dropped it before replying: it is down, not the front. */
    private static final class ServerGone extends Exception {
        /** Whether the request may have reached the server (false: the connection was refused). */
        final boolean reached;

        ServerGone(boolean reached, IOException cause) {
            super(cause);
            this.reached = reached;
        }
    }

    /**
     * Sends the request to the server on a fresh connection it closes after replying; returns the
     * whole reply.
     *
     * @throws ServerGone the server refused or reset the connection, or closed it without a reply
     */
    private byte[] forward(byte[] head, byte[] body) throws ServerGone {
        Socket up;
        try {
            up = new Socket(upstreamHost, upstreamPort);
        } catch (IOException refused) {
            throw new ServerGone(false, refused);
        }
        byte[] reply;
        try (up) {
            up.setSoTimeout(SOCKET_TIMEOUT_MS);
            OutputStream o = up.getOutputStream();
            o.write(withHeader(new String(head, ISO_8859_1), "Connection", "close").getBytes(ISO_8859_1));
            o.write(body);
            o.flush();
            reply = up.getInputStream().readAllBytes();
        } catch (SocketException e) { // reset
            throw new ServerGone(true, e);
        } catch (IOException e) {
            throw new UncheckedIOException("forwarding " + firstLine(new String(head, ISO_8859_1)) + " to "
                    + upstreamHost + ":" + upstreamPort + " failed", e);
        }
        if (reply.length == 0) throw new ServerGone(true, new IOException("the server closed the connection without a reply"));
        return reply;
    }

    /** The status code of a reply. */
    private static int status(byte[] reply) {
        String line = firstLine(new String(reply, 0, Math.min(reply.length, 64), ISO_8859_1));
        return Integer.parseInt(line.split(" ")[1]);
    }

    /** The server's reply with {@code Connection: close} and, if asked, its {@code Date} shifted; body untouched. */
    private byte[] rewriteReply(byte[] reply) {
        int end = indexOf(reply, END_OF_HEAD);
        if (end < 0) throw new IllegalStateException("the server's reply has no complete head (" + reply.length + " bytes)");
        String head = new String(reply, 0, end + END_OF_HEAD.length, ISO_8859_1);
        head = withHeader(head, "Connection", "close");
        Duration shift = dateShift;
        if (!shift.isZero()) {
            String date = header(head, "date");
            if (date == null) throw new IllegalStateException("the server's reply has no Date to shift: " + firstLine(head));
            ZonedDateTime at = ZonedDateTime.parse(date.trim(), DateTimeFormatter.RFC_1123_DATE_TIME);
            head = withHeader(head, "Date", HTTP_DATE.format(at.plus(shift)));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(reply.length + 64);
        out.writeBytes(head.getBytes(ISO_8859_1));
        out.write(reply, end + END_OF_HEAD.length, reply.length - end - END_OF_HEAD.length);
        return out.toByteArray();
    }

    /** An S3 error reply as AWS sends one (XML body, request id), dated now (shifted like the rest). */
    private byte[] error(Rule rule, String method) {
        String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + rule.code() + "</Code><Message>injected by "
                + "the test's HTTP front</Message><RequestId>latchkey-front</RequestId></Error>";
        byte[] body = method.equals("HEAD") ? new byte[0] : xml.getBytes(UTF_8);
        String head = "HTTP/1.1 " + rule.status() + " Injected\r\n"
                + "Content-Type: application/xml\r\n"
                + "Content-Length: " + xml.getBytes(UTF_8).length + "\r\n"
                + "Date: " + HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC).plus(dateShift)) + "\r\n"
                + "x-amz-request-id: latchkey-front\r\n"
                + "Connection: close\r\n\r\n";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(head.getBytes(ISO_8859_1));
        out.writeBytes(body);
        return out.toByteArray();
    }

    /** The request or reply head up to and including its blank line; null on EOF before any byte. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            matched = b == END_OF_HEAD[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == END_OF_HEAD.length) return head.toByteArray();
            if (head.size() > MAX_HEAD_BYTES) throw new IllegalStateException("request head over " + MAX_HEAD_BYTES + " bytes");
        }
        if (head.size() == 0) return null;
        throw new IllegalStateException("connection closed inside a request head");
    }

    /** The value of header {@code name} (any case) in {@code head}, or null. */
    private static String header(String head, String name) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) return line.substring(colon + 1).trim();
        }
        return null;
    }

    /** {@code head} (ending in a blank line) with header {@code name} set to {@code value}, replacing any. */
    private static String withHeader(String head, String name, String value) {
        List<String> lines = new ArrayList<>(List.of(head.substring(0, head.length() - 4).split("\r\n")));
        lines.removeIf(l -> l.indexOf(':') > 0 && l.substring(0, l.indexOf(':')).trim().equalsIgnoreCase(name));
        lines.add(name + ": " + value);
        return String.join("\r\n", lines) + "\r\n\r\n";
    }

    private static String firstLine(String head) {
        int eol = head.indexOf("\r\n");
        return eol < 0 ? head : head.substring(0, eol);
    }

    private static int indexOf(byte[] data, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= data.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (data[i + j] != pattern[j]) continue outer;
            }
            return i;
        }
        return -1;
    }
}
