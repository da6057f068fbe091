package dev.latchkey.postgres.shared;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on loopback between a client and the test server, to play the network's and the
 * client's failures over the real protocol: {@link Mode#FREEZE} stops moving bytes either way while
 * both connections stay open (what the server sees of a frozen process or a partition: a silent
 * peer whose kernel still answers); {@link Mode#DROP_REPLIES} passes the client's requests to the
 * server and throws its replies away (a request that lands, a reply that is lost); {@link #kill}
 * closes every connection at once (the client process died).
 */
public final class TcpProxy implements AutoCloseable {
    public enum Mode { FORWARD, FREEZE, DROP_REPLIES }

    private final ServerSocket listening;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile Mode mode = Mode.FORWARD;
    private volatile boolean closed;

    /** A proxy to the host and port of {@code postgresUri}. */
    public TcpProxy(String postgresUri) throws IOException {
        URI u = URI.create(postgresUri);
        this.target = new InetSocketAddress(u.getHost(), u.getPort());
        this.listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** {@code postgresUri} with its host and port replaced by this proxy's. */
    public String uri(String postgresUri) {
        URI u = URI.create(postgresUri);
        return postgresUri.replaceFirst("@" + java.util.regex.Pattern.quote(u.getHost() + ":" + u.getPort()),
                "@127.0.0.1:" + listening.getLocalPort());
    }

    public void mode(Mode mode) {
        synchronized (this) {
            this.mode = mode;
            notifyAll();
        }
    }

    /** Closes every connection through the proxy (new ones are still accepted). */
    public void kill() {
        for (Socket s : sockets) close(s);
        sockets.clear();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listening.accept();
                Socket server = new Socket();
                server.connect(target);
                sockets.add(client);
                sockets.add(server);
                pump(client, server, false);
                pump(server, client, true);
            } catch (IOException e) {
                if (!closed) e.printStackTrace();
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    Mode m = awaitNotFrozen();
                    if (replies && m == Mode.DROP_REPLIES) continue;
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side closed, or the proxy did
            } finally {
                close(from);
                close(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Holds the bytes just read while frozen: neither side gets them, and nothing more is read. */
    private synchronized Mode awaitNotFrozen() throws InterruptedException {
        while (mode == Mode.FREEZE && !closed) wait();
        return mode;
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        mode(Mode.FORWARD);
        listening.close();
        kill();
    }
}
