package dev.latchkey.tck;

import static dev.latchkey.tck.FaultProxy.Direction.CLIENT_TO_SERVER;
import static dev.latchkey.tck.FaultProxy.Direction.SERVER_TO_CLIENT;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.tck.FaultProxy.Direction;
import dev.latchkey.tck.RecordingSockets.Endpoint;
import dev.latchkey.tck.RecordingSockets.Server;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link FaultProxy} between real sockets on loopback: a client {@link Endpoint} and an in-test
 * {@link Server} whose every connection records what it receives (and echoes it, for the echo server).
 * Waits are on conditions; "soon" is 30 s. The only fixed wait is {@link #QUIET}, in checks that
 * nothing arrives while a fault holds, which assert absence only.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FaultProxyTest {
    private static final Duration SOON = Duration.ofSeconds(30);
    private static final Duration QUIET = Duration.ofMillis(300);
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fault-proxy-test");
        t.setDaemon(true);
        return t;
    });
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final Random random = new Random(20240611);

    @AfterEach
    void closeEverything() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) toClose.get(i).close();
        threads.shutdownNow();
    }

    @Test
    void passesLargeRandomPayloadsByteExactBothWaysOnConcurrentConnections() throws Exception {
        Server server = server(true);
        FaultProxy proxy = proxyTo(server);
        int connections = 3;
        int size = 4 << 20;
        List<byte[]> payloads = new ArrayList<>();
        List<Endpoint> clients = new ArrayList<>();
        List<Future<?>> writes = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            byte[] payload = randomBytes(size);
            Endpoint client = connect(proxy);
            payloads.add(payload);
            clients.add(client);
            writes.add(threads.submit(() -> {
                client.send(payload);
                client.socket.shutdownOutput();
                return null;
            }));
        }
        for (int i = 0; i < connections; i++) {
            writes.get(i).get(SOON.toSeconds(), TimeUnit.SECONDS);
            Endpoint client = clients.get(i);
            assertThat(client.awaitEnd(SOON)).as("the echo server's end of stream reached client %d", i).isTrue();
            assertThat(client.failure()).isNull();
            assertSameBytes(client.received(), payloads.get(i));
        }
        assertThat(server.awaitConnections(connections, SOON)).isTrue();
        List<byte[]> serverReceived = new ArrayList<>();
        for (int i = 0; i < connections; i++) serverReceived.add(server.connection(i).received());
        for (byte[] payload : payloads) {
            assertThat(serverReceived).as("exactly one server connection got each payload")
                    .filteredOn(received -> Arrays.equals(received, payload)).hasSize(1);
        }
        assertThat(proxy.forwardedBytes(CLIENT_TO_SERVER)).isEqualTo((long) connections * size);
        assertThat(proxy.forwardedBytes(SERVER_TO_CLIENT)).isEqualTo((long) connections * size);
        // the proxy closes a connection in the same step that passes its last end of stream on
        assertThat(proxy.openConnections()).isZero();
    }

    @Test
    void latencyDelaysEveryChunkInBothDirectionsAndKeepsTheirOrder() throws Exception {
        Server server = server(true);
        FaultProxy proxy = proxyTo(server);
        Duration latency = Duration.ofMillis(250);
        proxy.latency(latency);
        Endpoint client = connect(proxy);
        ByteArrayOutputStream sent = new ByteArrayOutputStream();
        long start = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            byte[] message = ("message " + i + " ").getBytes(US_ASCII);
            client.send(message); // TCP_NODELAY: separate segments, so mostly separate chunks
            sent.write(message);
        }
        assertThat(client.awaitReceived(sent.size(), SOON)).isTrue();
        long elapsed = System.nanoTime() - start;

        assertThat(client.received()).isEqualTo(sent.toByteArray());
        assertThat(Duration.ofNanos(elapsed)).as("every byte crossed the proxy twice").isGreaterThanOrEqualTo(latency.multipliedBy(2));
    }

    @Test
    void blackholeHoldsBothDirectionsPushesBackOnTheSenderAndHealDeliversEverythingOnceInOrder() throws Exception {
        Server server = server(false);
        FaultProxy proxy = proxyTo(server);
        Endpoint client = connect(proxy);
        Endpoint serverSide = establish(client, server);
        long toServerBefore = proxy.forwardedBytes(CLIENT_TO_SERVER);
        long toClientBefore = proxy.forwardedBytes(SERVER_TO_CLIENT);

        proxy.blackhole();
        // far more than the kernel buffers on both sides of the client's connection can absorb
        byte[] request = randomBytes(64 << 20);
        Future<?> writing = threads.submit(() -> {
            client.send(request);
            client.socket.shutdownOutput();
            return null;
        });
        byte[] reply = randomBytes(1024);
        serverSide.send(reply);

        assertThat(serverSide.awaitReceived(toServerBefore + 1, QUIET)).as("a byte reached the server").isFalse();
        assertThat(client.awaitReceived(toClientBefore + 1, QUIET)).as("a byte reached the client").isFalse();
        assertThat(writing.isDone()).as("the client's write completed: the proxy kept reading").isFalse();
        assertThat(proxy.forwardedBytes(CLIENT_TO_SERVER)).isEqualTo(toServerBefore);
        assertThat(proxy.forwardedBytes(SERVER_TO_CLIENT)).isEqualTo(toClientBefore);

        proxy.heal();
        writing.get(SOON.toSeconds(), TimeUnit.SECONDS);
        assertThat(serverSide.awaitEnd(SOON)).as("the client's end of stream reached the server").isTrue();
        assertThat(client.awaitEnd(SOON)).as("the server's end of stream reached the client").isTrue();
        assertSameBytes(serverSide.received(), concat(GREETING, request));
        assertSameBytes(client.received(), concat(GREETING, reply));
        assertThat(proxy.forwardedBytes(CLIENT_TO_SERVER)).isEqualTo(GREETING.length + (long) request.length);
        assertThat(proxy.forwardedBytes(SERVER_TO_CLIENT)).isEqualTo(GREETING.length + (long) reply.length);
    }

    @Test
    void blackholeStopsForwardingBeforeItReturnsWhileDataIsFlowing() throws Exception {
        Server server = server(false);
        FaultProxy proxy = proxyTo(server);
        Endpoint client = connect(proxy);
        Endpoint serverSide = establish(client, server);
        // chunks the proxy has read wait this long in its queue: the blackhole must hold those too
        proxy.latency(Duration.ofMillis(200));
        AtomicBoolean keepWriting = new AtomicBoolean(true);
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        Future<?> streaming = threads.submit(() -> {
            while (keepWriting.get()) {
                byte[] chunk = randomBytes(16 * 1024);
                client.send(chunk);
                written.write(chunk);
            }
            client.socket.shutdownOutput();
            return null;
        });
        assertThat(serverSide.awaitReceived(256 << 10, SOON)).as("data flows").isTrue();

        proxy.blackhole();
        long frozen = proxy.forwardedBytes(CLIENT_TO_SERVER);
        assertThat(serverSide.awaitReceived(frozen, SOON)).as("what was forwarded arrives").isTrue();
        assertThat(serverSide.awaitReceived(frozen + 1, QUIET)).as("more arrived after blackhole() returned").isFalse();
        assertThat(proxy.forwardedBytes(CLIENT_TO_SERVER)).isEqualTo(frozen);

        proxy.heal();
        keepWriting.set(false);
        streaming.get(SOON.toSeconds(), TimeUnit.SECONDS);
        assertThat(serverSide.awaitEnd(SOON)).isTrue();
        assertSameBytes(serverSide.received(), concat(GREETING, written.toByteArray()));
    }

    @Test
    void aConnectionMadeDuringBlackholeIsAcceptedButReachesTheServerOnlyAfterHeal() throws Exception {
        Server server = server(true);
        FaultProxy proxy = proxyTo(server);
        proxy.blackhole();
        Endpoint client = connect(proxy);
        client.send(GREETING);

        assertThat(server.awaitConnections(1, QUIET)).as("the proxy dialed the server during the blackhole").isFalse();
        assertThat(client.awaitReceived(1, QUIET)).isFalse();

        proxy.heal();
        assertThat(client.awaitReceived(GREETING.length, SOON)).isTrue();
        assertThat(client.received()).isEqualTo(GREETING);
        assertThat(server.awaitConnections(1, SOON)).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Direction.class)
    void stallHoldsOneDirectionWhileTheOtherFlows(Direction stalledDirection) throws Exception {
        Server server = server(false);
        FaultProxy proxy = proxyTo(server);
        Endpoint client = connect(proxy);
        Endpoint serverSide = establish(client, server);
        boolean towardsServer = stalledDirection == CLIENT_TO_SERVER;
        Endpoint stalledSender = towardsServer ? client : serverSide;
        Endpoint stalledReceiver = towardsServer ? serverSide : client;
        Direction flowingDirection = towardsServer ? SERVER_TO_CLIENT : CLIENT_TO_SERVER;
        long stalledBefore = proxy.forwardedBytes(stalledDirection);

        proxy.stall(stalledDirection);
        byte[] held = "held back".getBytes(US_ASCII);
        byte[] flowing = "flows through".getBytes(US_ASCII);
        stalledSender.send(held);
        stalledReceiver.send(flowing);

        assertThat(stalledSender.awaitReceived(GREETING.length + flowing.length, SOON)).as(flowingDirection + " flows").isTrue();
        assertThat(stalledSender.received()).isEqualTo(concat(GREETING, flowing));
        assertThat(stalledReceiver.awaitReceived(GREETING.length + 1, QUIET)).as(stalledDirection + " stalled").isFalse();
        assertThat(proxy.forwardedBytes(stalledDirection)).isEqualTo(stalledBefore);

        proxy.heal();
        assertThat(stalledReceiver.awaitReceived(GREETING.length + held.length, SOON)).isTrue();
        assertThat(stalledReceiver.received()).isEqualTo(concat(GREETING, held));
    }

    @Test
    void resetAllResetsEveryConnectionOnBothSidesAndNewConnectionsPass() throws Exception {
        Server server = server(true);
        FaultProxy proxy = proxyTo(server);
        Endpoint reading = connect(proxy);
        Endpoint writing = connect(proxy);
        for (Endpoint client : List.of(reading, writing)) {
            client.send(GREETING);
            assertThat(client.awaitReceived(GREETING.length, SOON)).isTrue();
        }
        assertThat(proxy.openConnections()).isEqualTo(2);

        proxy.resetAll();
        // right away: the RSTs have left when resetAll() returns (on loopback they arrive as they leave)
        assertThatThrownBy(() -> writing.send(GREETING)).as("the client's write").isInstanceOf(SocketException.class);
        assertThat(proxy.openConnections()).isZero();
        // an RST, not a FIN: a FIN would end the stream without an exception
        assertThat(reading.awaitEnd(SOON)).isTrue();
        assertThat(reading.failure()).as("the client's read").isInstanceOf(SocketException.class);
        for (int i = 0; i < 2; i++) {
            Endpoint serverSide = server.connection(i);
            assertThat(serverSide.awaitEnd(SOON)).isTrue();
            assertThat(serverSide.failure()).as("the server's read").isInstanceOf(SocketException.class);
        }

        Endpoint fresh = connect(proxy);
        fresh.send(GREETING);
        assertThat(fresh.awaitReceived(GREETING.length, SOON)).isTrue();
        assertThat(fresh.received()).isEqualTo(GREETING);
    }

    @Test
    void aServerThatRefusesTheConnectionResetsTheClient() throws Exception {
        int unused;
        try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
            unused = probe.getLocalPort();
        }
        FaultProxy proxy = own(FaultProxy.start(LOOPBACK.getHostAddress(), unused));
        Endpoint client = connect(proxy);

        assertThat(client.awaitEnd(SOON)).isTrue();
        assertThat(client.failure()).isInstanceOf(SocketException.class);
        assertThat(proxy.openConnections()).isZero();
    }

    @Test
    void closeResetsConnectionsReleasesThePortAndEndsItsThread() throws Exception {
        Server server = server(true);
        FaultProxy proxy = proxyTo(server);
        Endpoint client = connect(proxy);
        client.send(GREETING);
        assertThat(client.awaitReceived(GREETING.length, SOON)).isTrue();
        int port = proxy.port();
        List<Thread> proxyThreads = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("fault-proxy 127.0.0.1:" + port + " -> ")).toList();
        assertThat(proxyThreads).hasSize(1).allMatch(Thread::isDaemon);

        proxy.close();
        // right away: close() returns after its thread ended and released the port
        assertThat(proxyThreads.get(0).isAlive()).as("the proxy's thread is alive").isFalse();
        try (ServerSocket again = new ServerSocket(port, 1, LOOPBACK)) {
            assertThat(again.getLocalPort()).isEqualTo(port);
        }
        assertThat(client.awaitEnd(SOON)).isTrue();
        assertThat(client.failure()).isInstanceOf(SocketException.class);
        assertThatThrownBy(proxy::blackhole).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        proxy.close(); // idempotent
    }

    @Test
    void rewriteReplacesTheTargetsHostAndPortOnly() {
        FaultProxy proxy = own(FaultProxy.start("127.0.0.1", 5432));
        String via = "127.0.0.1:" + proxy.port();

        assertThat(proxy.rewrite("postgres://app:secret@127.0.0.1:5432/locks?mode=lease"))
                .isEqualTo("postgres://app:secret@" + via + "/locks?mode=lease");
        assertThat(proxy.rewrite("s3://bucket/locks?endpoint=http://127.0.0.1:5432&region=us-east-1"))
                .isEqualTo("s3://bucket/locks?endpoint=http://" + via + "&region=us-east-1");
        assertThatThrownBy(() -> proxy.rewrite("postgres://app:secret@127.0.0.1:54321/locks"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("127.0.0.1:5432")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> proxy.rewrite("postgres://app:secret@10.127.0.0.1:5432/locks"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ---- fixtures ----

    private static final byte[] GREETING = "hello".getBytes(US_ASCII);

    /** Exchanges {@link #GREETING} both ways over the server's first connection, so the proxy has dialed; returns its server side. */
    private Endpoint establish(Endpoint client, Server server) throws Exception {
        client.send(GREETING);
        assertThat(server.awaitConnections(1, SOON)).isTrue();
        Endpoint serverSide = server.connection(0);
        assertThat(serverSide.awaitReceived(GREETING.length, SOON)).isTrue();
        serverSide.send(GREETING);
        assertThat(client.awaitReceived(GREETING.length, SOON)).isTrue();
        return serverSide;
    }

    private Server server(boolean echo) throws IOException {
        return own(new Server(echo, threads));
    }

    private FaultProxy proxyTo(Server server) {
        return own(FaultProxy.start(LOOPBACK.getHostAddress(), server.port()));
    }

    private Endpoint connect(FaultProxy proxy) throws IOException {
        Socket socket = new Socket(proxy.host(), proxy.port());
        socket.setTcpNoDelay(true);
        return own(new Endpoint(socket, false, false, threads));
    }

    private <T extends AutoCloseable> T own(T resource) {
        toClose.add(resource);
        return resource;
    }

    private byte[] randomBytes(int size) {
        byte[] bytes = new byte[size];
        random.nextBytes(bytes);
        return bytes;
    }

    private static byte[] concat(byte[] first, byte[] second) {
        byte[] both = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }

    /** Compares without printing megabytes on failure. */
    private static void assertSameBytes(byte[] actual, byte[] expected) {
        assertThat(actual.length).as("length").isEqualTo(expected.length);
        assertThat(Arrays.mismatch(actual, expected)).as("index of the first differing byte").isEqualTo(-1);
    }
}
