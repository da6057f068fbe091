package dev.latchkey.tck;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Real sockets for {@link FaultProxyTest}: every end records what it receives on a thread of the
 * given executor, and every wait is on a condition notified when that changes.
 */
final class RecordingSockets {
    private RecordingSockets() {}

    /** Waits on {@code monitor} (notified on every change) until {@code condition} holds or {@code timeout} passes. */
    private static boolean await(Object monitor, BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (monitor) {
            while (!condition.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) return false;
                TimeUnit.NANOSECONDS.timedWait(monitor, left);
            }
            return true;
        }
    }

    /**
     * One end of a TCP connection: a thread of the executor records every byte that arrives, then the end of
     * stream or the exception that ended reading. A server-side end echoes what it reads (if asked)
     * and ends its output when the peer's ends.
     */
    static final class Endpoint implements AutoCloseable {
        final Socket socket;
        private final ByteArrayOutputStream received = new ByteArrayOutputStream(); // guarded by this
        private boolean ended;
        private IOException failure;

        Endpoint(Socket socket, boolean echo, boolean serverSide, ExecutorService threads) {
            this.socket = socket;
            threads.submit(() -> {
                record(echo);
                if (serverSide) endOutput();
            });
        }

        private void record(boolean echo) {
            byte[] buffer = new byte[64 * 1024];
            try {
                InputStream in = socket.getInputStream();
                OutputStream out = echo ? socket.getOutputStream() : null; // a client may have shut its output already
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    synchronized (this) {
                        received.write(buffer, 0, n);
                        notifyAll();
                    }
                    if (echo) out.write(buffer, 0, n);
                }
                finish(null);
            } catch (IOException e) {
                finish(e);
            }
        }

        private void endOutput() {
            try {
                if (!socket.isClosed()) socket.shutdownOutput();
            } catch (IOException ignored) {
                // the connection failed; failure() tells
            }
        }

        private synchronized void finish(IOException e) {
            ended = true;
            failure = e;
            notifyAll();
        }

        void send(byte[] data) throws IOException {
            socket.getOutputStream().write(data);
        }

        boolean awaitReceived(long count, Duration timeout) throws InterruptedException {
            return await(this, () -> received.size() >= count, timeout);
        }

        /** Until reading ended: end of stream ({@link #failure()} null) or an exception. */
        boolean awaitEnd(Duration timeout) throws InterruptedException {
            return await(this, () -> ended, timeout);
        }

        synchronized byte[] received() {
            return received.toByteArray();
        }

        synchronized IOException failure() {
            return failure;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A loopback server whose every connection is a recording server-side {@link Endpoint}; {@code echo}: it also echoes. */
    static final class Server implements AutoCloseable {
        private final ServerSocket listener;
        private final List<Endpoint> connections = new ArrayList<>(); // guarded by this

        Server(boolean echo, ExecutorService threads) throws IOException {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            threads.submit(() -> {
                try {
                    while (true) {
                        Endpoint accepted = new Endpoint(listener.accept(), echo, true, threads);
                        synchronized (this) {
                            connections.add(accepted);
                            notifyAll();
                        }
                    }
                } catch (IOException closed) {
                    // close() ends accepting
                }
            });
        }

        int port() {
            return listener.getLocalPort();
        }

        boolean awaitConnections(int count, Duration timeout) throws InterruptedException {
            return await(this, () -> connections.size() >= count, timeout);
        }

        synchronized Endpoint connection(int index) {
            return connections.get(index);
        }

        @Override
        public synchronized void close() throws IOException {
            listener.close();
            for (Endpoint c : connections) c.close();
        }
    }
}
