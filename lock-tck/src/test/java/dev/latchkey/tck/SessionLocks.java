package dev.latchkey.tck;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.ManagedLease;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Session locks over TCP, for {@link TckSelfTest}, with the bug PostgreSQL advisory mode once had:
 * the server holds a key for the connection that locked it and frees it when that connection
 * closes; the client closes its connection when a renewal's reply is later than the URI's
 * {@code timeout}, and its lease then stays valid until its deadline, renewals failing as retriable
 * errors — or, with {@code onTimeout=lost}, reports the lease lost at once, just before the server
 * frees the key. A reply slower than the timeout thus hands the key to a contender under a valid
 * lease, or long before the lease could have run out.
 * Nothing here is for real use.
 */
final class SessionLocks {
    private SessionLocks() {}

    /** The server: {@code LOCK key} answers {@code OK} or {@code NO}, {@code PING} answers {@code PONG}. */
    static final class Server implements AutoCloseable {
        private final ServerSocket listener;
        private final Map<String, Socket> holders = new ConcurrentHashMap<>();

        Server() throws IOException {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread accepting = new Thread(this::accept, "session-locks-server");
            accepting.setDaemon(true);
            accepting.start();
        }

        InetSocketAddress address() {
            return new InetSocketAddress("127.0.0.1", listener.getLocalPort());
        }

        private void accept() {
            while (!listener.isClosed()) {
                try {
                    Socket s = listener.accept();
                    Thread session = new Thread(() -> serve(s), "session-locks-session");
                    session.setDaemon(true);
                    session.start();
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void serve(Socket s) {
            try (s; BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))) {
                OutputStream out = s.getOutputStream();
                for (String line; (line = in.readLine()) != null; ) {
                    String reply = line.startsWith("LOCK ") ? (holders.putIfAbsent(line.substring(5), s) == null ? "OK" : "NO")
                            : line.startsWith("UNLOCK ") ? (holders.remove(line.substring(7), s) ? "OK" : "NO") : "PONG";
                    out.write((reply + "\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            } catch (IOException e) {
                // the session ended
            } finally {
                holders.values().removeIf(s::equals); // the session's locks go with it
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }

    /** The client: one connection per lease, replies awaited for the URI's {@code timeout}. */
    static final class Manager implements LockManager {
        private final InetSocketAddress server;
        private final int timeoutMillis;
        private final LeaseRuntime runtime;
        private final boolean reportsLoss;

        Manager(String uri, LockContext context) {
            LockUri u = LockUri.parse(uri);
            this.server = new InetSocketAddress(u.host(), u.port().orElseThrow());
            this.timeoutMillis = (int) u.durationParam("timeout", Duration.ofSeconds(1)).toMillis();
            this.runtime = LeaseRuntime.create(context, "session");
            this.reportsLoss = u.param("onTimeout", "").equals("lost");
        }

        @Override
        public Optional<Lease> tryAcquire(String key, LeaseOptions options) {
            LockKeys.validate(key);
            long sent = runtime.time().nanoTime();
            try {
                Socket s = new Socket();
                s.connect(server, timeoutMillis);
                s.setSoTimeout(timeoutMillis);
                if (!"OK".equals(call(s, "LOCK " + key))) {
                    s.close();
                    return Optional.empty();
                }
                SessionLease lease = new SessionLease(runtime, key, options, sent, s, reportsLoss);
                lease.begin();
                return Optional.of(lease);
            } catch (IOException e) {
                throw new LockBackendException("session locks: " + e, true, e);
            }
        }

        @Override
        public Lease acquire(String key, Duration maxWait, LeaseOptions options) {
            long start = System.nanoTime();
            while (true) {
                Optional<Lease> l = tryAcquire(key, options);
                if (l.isPresent()) return l.get();
                if (System.nanoTime() - start > maxWait.toNanos()) throw new LockTimeoutException(key, maxWait, null);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new LockBackendException("interrupted", false, e);
                }
            }
        }

        @Override public Optional<LockInfo> inspect(String key) {
            LockKeys.validate(key);
            return Optional.empty(); // the self-test only needs it to send nothing harmful
        }
        @Override public List<LockInfo> list(String prefix) { return List.of(); }
        @Override public boolean forceRelease(String key) { throw new UnsupportedOperationException(); }
        @Override public boolean forceRelease(String key, String leaseId) { throw new UnsupportedOperationException(); }
        @Override public Set<Capability> capabilities() { return Set.of(); }
        @Override public String description() { return "session locks at " + server; }
        @Override public void close() {}
    }

    private static String call(Socket s, String request) throws IOException {
        s.getOutputStream().write((request + "\n").getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
        StringBuilder reply = new StringBuilder();
        for (int c; (c = s.getInputStream().read()) != '\n'; ) {
            if (c < 0) throw new IOException("the session ended");
            reply.append((char) c);
        }
        return reply.toString();
    }

    private static final class SessionLease extends ManagedLease {
        private final Socket session;
        private final boolean reportsLoss;

        SessionLease(LeaseRuntime runtime, String key, LeaseOptions options, long sent, Socket session, boolean reportsLoss) {
            super(runtime, key, UUID.randomUUID().toString(), 0, options, sent);
            this.session = session;
            this.reportsLoss = reportsLoss;
        }

        void begin() {
            start();
        }

        @Override
        protected synchronized long renewInStore(Duration ttl, long sentNanos) {
            try {
                call(session, "PING");
                return sentNanos;
            } catch (SocketTimeoutException e) {
                closeQuietly(); // THE BUG: the server frees the key with the session
                if (reportsLoss) throw new LeaseLostException(LeaseLostException.Reason.SESSION_ENDED, "the session was closed", e);
                throw new LockBackendException("no reply within the timeout; the session was closed", true, e); // still valid
            } catch (IOException e) {
                throw new LockBackendException("session locks: " + e, true, e);
            }
        }

        @Override
        protected synchronized void releaseInStore() {
            try {
                call(session, "UNLOCK " + key());
            } catch (IOException e) {
                // the session is gone, and the key with it
            } finally {
                closeQuietly();
            }
        }

        private void closeQuietly() {
            try {
                session.close();
            } catch (IOException e) {
                // closed is closed
            }
        }
    }
}
