package dev.latchkey.tck;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TCP proxy on loopback that puts network faults between a lock client and its real server, so a
 * test can check what a lock does when the store becomes slow, unreachable or drops connections.
 * Clients connect to {@link #host()}:{@link #port()} instead of the server ({@link #rewrite} turns a
 * backend URI into one that does); the test switches faults on and off while they run.
 *
 * <p><b>Guarantees.</b>
 * <ul>
 *   <li><b>No byte is dropped, duplicated or reordered</b> except by {@link #resetAll()} and
 *       {@link #close()}, which drop connections for real. Holding data back ({@link #blackhole()},
 *       {@link #stall}) means the proxy stops <em>reading</em> from the source socket: the sender's
 *       kernel buffers fill and its writes block, as when TCP keeps retransmitting into a partition.
 *       {@link #heal()} resumes, and everything held is delivered once, in order.</li>
 *   <li><b>Every switch takes effect before it returns</b>, on every connection: once
 *       {@code blackhole()} returns, no further byte is forwarded in either direction (a chunk the
 *       proxy had already read is kept, not sent); once {@code stall(d)} returns, none in direction
 *       {@code d}; once {@code resetAll()} returns, every connection made before it was called has been
 *       reset on both sides. All methods are thread-safe.</li>
 *   <li><b>Bounded memory</b>: at most 256 KiB per direction per connection is read ahead of the
 *       destination; past that the proxy stops reading until the destination takes some.</li>
 * </ul>
 *
 * <p><b>Faults.</b> {@link #latency} delays every chunk (one read from a socket, up to 16 KiB) in
 * both directions; {@link #blackhole} is a partition of all connections, also of new ones, which are
 * accepted but not passed on (the proxy dials the server only after {@code heal()}, as a SYN lost in a
 * partition is retried after it); {@link #stall} stops one direction of every connection; faults add
 * up ({@code stall} of both directions holds all data, but unlike a blackhole still lets new
 * connections reach the server) until {@link #heal} clears them all, latency included. When either
 * side of a connection fails or resets, the proxy resets the other; when the server refuses the
 * proxy's connection, the client's is reset. An end of stream (FIN) is passed on like data, in order.
 *
 * <p><b>What it does not model.</b> This is an application-level partition. The proxy's own kernel
 * still completes handshakes, ACKs every segment that fits its receive buffer and answers keepalive
 * probes, so TCP keepalive or {@code TCP_USER_TIMEOUT} on either side never detects a blackhole or a
 * stall; only timeouts in the client's or server's protocol do. Nor does it model packet loss (TCP
 * hides it), bandwidth limits, or a failed connect: the client's connect always succeeds, and a
 * server that refuses shows as a reset. A real partition needs network namespaces and packet filtering. The proxy does not rewrite bytes: a protocol that carries the address (the HTTP
 * {@code Host} header, and the signatures computed over it) carries the proxy's, consistently on
 * both ends.
 *
 * <p><b>Threads.</b> One daemon thread per proxy, named {@code fault-proxy 127.0.0.1:<port> -> <target>},
 * runs a selector over non-blocking sockets. It reads and writes only while holding the lock every
 * switch takes: that is what makes switches immediate without ever waiting for a peer that does not
 * read. It blocks in the selector until a socket is ready, a switch changes or a delayed chunk is
 * due; it never polls. {@link #close()} stops and joins it.
 */
public final class FaultProxy implements AutoCloseable {

    /** A direction of data through the proxy. */
    public enum Direction { CLIENT_TO_SERVER, SERVER_TO_CLIENT }

    private static final String LOOPBACK = "127.0.0.1";
    private static final int CHUNK_BYTES = 16 * 1024;
    private static final int MAX_QUEUED_BYTES = 256 * 1024;
    private static final long NOT_WAITING = Long.MAX_VALUE;

    private final InetSocketAddress target; // keeps the host as given, for rewrite()
    private final Selector selector;
    private final ServerSocketChannel listener;
    private final int port;
    private final Thread loop;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition resetsServed = lock.newCondition();
    // all below guarded by lock
    private long latencyNanos;
    private boolean partitioned;
    private final EnumSet<Direction> stalled = EnumSet.noneOf(Direction.class);
    private final List<Connection> connections = new ArrayList<>();
    private final long[] forwarded = new long[Direction.values().length];
    private long resetsRequested;
    private long resetsDone;
    private boolean closeRequested;
    private boolean stopped;
    private Throwable failure;

    private FaultProxy(InetSocketAddress target, Selector selector, ServerSocketChannel listener) throws IOException {
        this.target = target;
        this.selector = selector;
        this.listener = listener;
        this.port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
        this.loop = new Thread(this::runLoop, "fault-proxy " + LOOPBACK + ":" + port + " -> " + target.getHostString() + ":" + target.getPort());
        loop.setDaemon(true);
    }

    /** Starts a pass-through proxy to {@code targetHost:targetPort}, listening on a free loopback port. */
    public static FaultProxy start(String targetHost, int targetPort) {
        InetSocketAddress target = new InetSocketAddress(targetHost, targetPort);
        if (target.isUnresolved()) {
            throw new IllegalArgumentException("cannot resolve the target host " + targetHost + "; pass a name or address this machine resolves");
        }
        Selector selector = null;
        ServerSocketChannel listener = null;
        try {
            selector = Selector.open();
            listener = ServerSocketChannel.open();
            listener.bind(new InetSocketAddress(LOOPBACK, 0));
            listener.configureBlocking(false);
            listener.register(selector, SelectionKey.OP_ACCEPT);
            FaultProxy proxy = new FaultProxy(target, selector, listener);
            proxy.loop.start();
            return proxy;
        } catch (IOException e) {
            closeQuietly(listener);
            closeQuietly(selector);
            throw new UncheckedIOException("cannot listen on " + LOOPBACK + " for a fault proxy to " + targetHost + ":" + targetPort, e);
        }
    }

    /** Where clients connect instead of the server: always {@code 127.0.0.1}. */
    public String host() {
        return LOOPBACK;
    }

    public int port() {
        return port;
    }

    /**
     * {@code uri} with every {@code host:port} of the target, exactly as passed to {@link #start},
     * replaced by the proxy's, wherever it stands (authority or a query parameter such as an S3
     * {@code endpoint=}): {@code postgres://u@127.0.0.1:5432/db} becomes {@code postgres://u@127.0.0.1:40123/db}.
     *
     * @throws IllegalArgumentException if the URI does not contain the target's {@code host:port}
     *                                  (the message does not repeat the URI, which may hold a password)
     */
    public String rewrite(String uri) {
        String host = target.getHostString();
        boolean bareIpv6 = host.indexOf(':') >= 0 && !host.startsWith("[");
        String authority = (bareIpv6 ? "[" + host + "]" : host) + ":" + target.getPort();
        // not part of a longer host name before it, nor of a longer port after it
        Matcher m = Pattern.compile("(?<![\\w.\\-])" + Pattern.quote(authority) + "(?!\\d)").matcher(uri);
        if (!m.find()) {
            throw new IllegalArgumentException("the URI does not contain " + authority
                    + "; start the proxy with the target's host and port spelled as in the URI");
        }
        return m.replaceAll(Matcher.quoteReplacement(host() + ":" + port));
    }

    /** From now on, every chunk read in either direction is delivered {@code perChunk} later; order is kept. */
    public void latency(Duration perChunk) {
        if (perChunk.isNegative()) throw new IllegalArgumentException("latency must not be negative: " + perChunk);
        change(() -> latencyNanos = perChunk.toNanos());
    }

    /** Partition: nothing is forwarded either way on any connection; new connections are accepted and get nothing. */
    public void blackhole() {
        change(() -> partitioned = true);
    }

    /** Stops direction {@code d} on every connection; the other direction keeps flowing. */
    public void stall(Direction d) {
        Objects.requireNonNull(d, "direction");
        change(() -> stalled.add(d));
    }

    /** Back to pass-through without latency; what blackhole or stall held back is delivered now, in order. */
    public void heal() {
        change(() -> {
            partitioned = false;
            stalled.clear();
            latencyNanos = 0;
        });
    }

    /**
     * Resets every open connection (close with {@code SO_LINGER} 0, so both peers get an RST and their
     * next read or write fails) and returns once the resets are sent. Held data is dropped.
     * Connections made after it returns pass.
     */
    public void resetAll() {
        lock.lock();
        try {
            ensureRunning();
            long ticket = ++resetsRequested;
            selector.wakeup();
            while (resetsDone < ticket && !stopped) resetsServed.awaitUninterruptibly();
            if (failure != null) throw failed();
        } finally {
            lock.unlock();
        }
    }

    /** Client connections the proxy has accepted and not yet closed or reset. */
    public int openConnections() {
        lock.lock();
        try {
            return connections.size();
        } finally {
            lock.unlock();
        }
    }

    /** Bytes written to the destination socket in direction {@code d}, over all connections so far. */
    public long forwardedBytes(Direction d) {
        lock.lock();
        try {
            return forwarded[d.ordinal()];
        } finally {
            lock.unlock();
        }
    }

    /** Resets every connection, releases the port and stops the proxy's thread; returns after it ended. */
    @Override
    public void close() {
        lock.lock();
        try {
            closeRequested = true;
            selector.wakeup();
        } finally {
            lock.unlock();
        }
        boolean interrupted = false;
        while (loop.isAlive()) {
            try {
                loop.join();
            } catch (InterruptedException e) {
                interrupted = true; // finish closing first: a half-closed proxy would keep the port
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    private void change(Runnable switchFaults) {
        lock.lock();
        try {
            ensureRunning();
            switchFaults.run();
            selector.wakeup(); // the loop re-decides what to read and write
        } finally {
            lock.unlock();
        }
    }

    private void ensureRunning() {
        if (failure != null) throw failed();
        if (closeRequested || stopped) throw new IllegalStateException("this fault proxy is closed; start a new one");
    }

    private IllegalStateException failed() {
        return new IllegalStateException("the fault proxy's I/O thread failed and closed every connection (see the cause); start a new proxy", failure);
    }

    private void runLoop() {
        try {
            long timeoutMillis = 0; // 0: until a socket is ready or a switch wakes the selector
            while (true) {
                selector.select(timeoutMillis);
                lock.lock();
                try {
                    if (closeRequested) return;
                    timeoutMillis = step();
                } finally {
                    lock.unlock();
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            lock.lock();
            try {
                failure = e;
            } finally {
                lock.unlock();
            }
        } finally {
            shutDown();
        }
    }

    /**
     * One pass under the lock: serves requested resets, handles ready sockets, then moves every flow as
     * far as the faults allow. Returns the selector timeout in ms until the next delayed chunk, 0 for none.
     */
    private long step() throws IOException {
        if (resetsDone < resetsRequested) {
            acceptPending(); // a connection the client made before the call may still wait in the backlog
            for (Connection c : List.copyOf(connections)) c.close(true);
            // the JDK closes a registered channel's socket only when the selector deregisters it: make the RSTs leave now
            selector.selectNow();
            resetsDone = resetsRequested;
            resetsServed.signalAll();
        }
        long now = System.nanoTime();
        for (SelectionKey key : selector.selectedKeys()) {
            if (!key.isValid()) continue;
            if (key.channel() == listener) acceptPending();
            else ((Connection) key.attachment()).ready(key, now);
        }
        selector.selectedKeys().clear();
        long nextDelay = NOT_WAITING;
        for (Connection c : List.copyOf(connections)) nextDelay = Math.min(nextDelay, c.pump(now));
        return nextDelay == NOT_WAITING ? 0 : Math.max(1, (nextDelay + 999_999) / 1_000_000);
    }

    private void acceptPending() throws IOException {
        SocketChannel client;
        while ((client = listener.accept()) != null) {
            try {
                client.configureBlocking(false);
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                connections.add(new Connection(client));
            } catch (IOException e) {
                closeQuietly(client); // the client is gone already
            }
        }
    }

    private void shutDown() {
        lock.lock();
        try {
            for (Connection c : List.copyOf(connections)) c.close(true);
            closeQuietly(listener);
            closeQuietly(selector); // deregisters every channel, which is when their sockets really close
            stopped = true;
            resetsServed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private static void closeQuietly(Closeable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing more can be done for a socket that fails to close
        }
    }

    /** One client connection and the proxy's connection to the server for it. Used only by the loop, under the lock. */
    private final class Connection {
        private final SocketChannel client;
        private final SelectionKey clientKey;
        private SocketChannel server; // null until the proxy dials, which it does not during a blackhole
        private SelectionKey serverKey;
        private boolean serverConnected;
        private final Flow toServer = new Flow(Direction.CLIENT_TO_SERVER);
        private final Flow toClient = new Flow(Direction.SERVER_TO_CLIENT);

        Connection(SocketChannel client) throws IOException {
            this.client = client;
            this.clientKey = client.register(selector, 0, this);
        }

        void ready(SelectionKey key, long now) {
            try {
                if (key.isConnectable()) serverConnected = server.finishConnect();
                else if (key.isReadable()) (key == clientKey ? toServer : toClient).read(now);
            } catch (IOException e) {
                close(true); // also a refused connect: the client is reset
            }
        }

        /**
         * Dials the server if due, delivers what the faults let through, then tells the selector what
         * to watch. Returns the nanoseconds until a held-by-latency chunk is due, or NOT_WAITING.
         */
        long pump(long now) {
            try {
                if (server == null && !partitioned) dial();
                long nextDelay = Math.min(toServer.deliver(now), toClient.deliver(now));
                if (toServer.endDelivered && toClient.endDelivered) {
                    close(false);
                    return NOT_WAITING;
                }
                clientKey.interestOps(interest(toServer, toClient, now));
                if (server != null) serverKey.interestOps(serverConnected ? interest(toClient, toServer, now) : SelectionKey.OP_CONNECT);
                return nextDelay;
            } catch (IOException e) {
                close(true);
                return NOT_WAITING;
            }
        }

        /** What to watch on the socket that is the source of {@code outgoing} and the destination of {@code incoming}. */
        private int interest(Flow outgoing, Flow incoming, long now) {
            return (outgoing.mayRead() ? SelectionKey.OP_READ : 0) | (incoming.blockedOnWrite(now) ? SelectionKey.OP_WRITE : 0);
        }

        private void dial() throws IOException {
            server = SocketChannel.open();
            server.configureBlocking(false);
            server.setOption(StandardSocketOptions.TCP_NODELAY, true);
            serverKey = server.register(selector, 0, this);
            serverConnected = server.connect(target);
        }

        /** {@code abort}: SO_LINGER 0, so closing sends RST instead of FIN and discards unsent data. */
        void close(boolean abort) {
            connections.remove(this);
            for (SocketChannel channel : new SocketChannel[] {client, server}) {
                if (channel == null) continue;
                if (abort) {
                    try {
                        channel.setOption(StandardSocketOptions.SO_LINGER, 0);
                    } catch (IOException alreadyClosed) {
                        // a closed socket sends nothing either way
                    }
                }
                closeQuietly(channel);
            }
        }

        /** The data of one direction: chunks read from the source and not yet written to the destination. */
        private final class Flow {
            private final Direction direction;
            private final ArrayDeque<Chunk> queue = new ArrayDeque<>();
            private int queuedBytes;
            private boolean sourceEnded;
            private boolean endDelivered;

            Flow(Direction direction) {
                this.direction = direction;
            }

            private SocketChannel source() {
                return direction == Direction.CLIENT_TO_SERVER ? client : server;
            }

            private SocketChannel destination() {
                return direction == Direction.CLIENT_TO_SERVER ? server : client;
            }

            private boolean held() {
                return partitioned || stalled.contains(direction);
            }

            /** Reading stops while held (so the sender feels it), until the server is connected, and when enough is queued. */
            boolean mayRead() {
                return serverConnected && !held() && !sourceEnded && queuedBytes < MAX_QUEUED_BYTES;
            }

            void read(long now) throws IOException {
                if (!mayRead()) return; // a switch flipped since the selector was told to watch this socket
                ByteBuffer data = ByteBuffer.allocate(CHUNK_BYTES);
                int n = source().read(data);
                if (n < 0) {
                    sourceEnded = true;
                    queue.add(new Chunk(null, now + latencyNanos));
                } else if (n > 0) {
                    queue.add(new Chunk(data.flip(), now + latencyNanos));
                    queuedBytes += n;
                }
            }

            /** Writes due chunks in order until one is not yet due or the destination is full. Returns nanos until the head is due, or NOT_WAITING. */
            long deliver(long now) throws IOException {
                if (held() || !serverConnected) return NOT_WAITING;
                for (Chunk head; (head = queue.peek()) != null; queue.remove()) {
                    long delay = head.dueNanos - now;
                    if (delay > 0) return delay;
                    if (head.data == null) {
                        destination().shutdownOutput();
                        endDelivered = true;
                        continue;
                    }
                    int n = destination().write(head.data);
                    queuedBytes -= n;
                    forwarded[direction.ordinal()] += n;
                    if (head.data.hasRemaining()) return NOT_WAITING; // destination full: OP_WRITE wakes the loop
                }
                return NOT_WAITING;
            }

            /** After {@link #deliver}: a due chunk is left only if the destination could not take it. */
            boolean blockedOnWrite(long now) {
                Chunk head = queue.peek();
                return serverConnected && !held() && head != null && head.dueNanos - now <= 0;
            }
        }
    }

    /** Bytes read in one go, or the end of the stream ({@code data == null}), due for delivery at {@code dueNanos}. */
    private record Chunk(ByteBuffer data, long dueNanos) {}
}
