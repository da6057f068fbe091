package dev.latchkey.postgres;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * One {@code LISTEN} session per manager that wakes local waiters when a key is released.
 *
 * <p><b>Guarantee.</b> Only an accelerator: a waiter registers before its attempt, so a release
 * notified after the attempt always wakes it; a notification lost (listener reconnecting, server
 * restart) costs at most one poll interval, because waiters never wait longer than that. When the
 * listening session fails, every waiter is woken to poll, and the listener reconnects.
 */
final class ReleaseListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ReleaseListener.class.getName());
    private static final long POLL_NOTIFICATIONS_MS = 250;

    private final PgPool<?> pool;
    private final String channel;
    private final Map<String, long[]> waiting = new HashMap<>(); // key -> {waiters, version}
    private Thread thread;
    private boolean attempted;
    private boolean closed;

    ReleaseListener(PgPool<?> pool, String channel) {
        this.pool = pool;
        this.channel = channel;
    }

    /**
     * Declares interest in {@code key} (starting the listener on first use and waiting briefly
     * for its {@code LISTEN}). Pair with {@link #unregister}.
     */
    synchronized void register(String key, long startupWaitMillis) throws InterruptedException {
        if (thread == null && !closed) {
            thread = new Thread(this::run, "latchkey-pg-listen-" + channel);
            thread.setDaemon(true);
            thread.start();
        }
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startupWaitMillis);
        while (!attempted && !closed) {
            long left = until - System.nanoTime();
            if (left <= 0) break;
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        waiting.computeIfAbsent(key, k -> new long[2])[0]++;
    }

    /** The release count of a registered key, to pass to {@link #await}. */
    synchronized long version(String key) {
        long[] w = waiting.get(key);
        return w == null ? 0 : w[1];
    }

    synchronized void unregister(String key) {
        long[] w = waiting.get(key);
        if (w != null && --w[0] <= 0) waiting.remove(key);
    }

    /** Waits until {@code key} was released after {@code version} was read, or {@code millis} pass. */
    synchronized void await(String key, long version, long millis) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!closed) {
            long[] w = waiting.get(key);
            if (w == null || w[1] != version) return;
            long left = until - System.nanoTime();
            if (left <= 0) return;
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    private synchronized void released(String key) {
        long[] w = waiting.get(key);
        if (w != null) {
            w[1]++;
            notifyAll();
        }
    }

    private synchronized void state(boolean nowListening) {
        attempted = true;
        if (!nowListening) waiting.values().forEach(w -> w[1]++); // nobody can rely on a wake-up now: poll
        notifyAll();
    }

    private void run() {
        while (true) {
            synchronized (this) {
                if (closed) return;
            }
            Connection c = null;
            try {
                c = pool.open();
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + PgSettings.quote(channel));
                }
                skipTrailingPeek(c);
                state(true);
                PGConnection pg = c.unwrap(PGConnection.class);
                while (true) {
                    synchronized (this) {
                        if (closed) return;
                    }
                    PGNotification[] ns = pg.getNotifications((int) POLL_NOTIFICATIONS_MS);
                    if (ns != null) {
                        for (PGNotification n : ns) released(n.getParameter());
                    }
                }
            } catch (SQLException | RuntimeException e) {
                LOG.log(Level.DEBUG, "release listener on " + channel + " failed; waiters poll until it reconnects", e);
                state(false);
            } finally {
                PgPool.closeQuietly(c);
            }
            synchronized (this) {
                if (closed) return;
                try {
                    wait(1000); // reconnect back-off; close() wakes it
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /**
     * Makes {@code getNotifications} return as soon as it has read what arrived. PgJDBC (42.7) ends
     * every call that received a notification with a 1 ms read to see whether more is pending
     * ({@link PgDriver}); switching that read off on this session means a notification arriving
     * later is read by the next call, which blocks on the socket — so no wake-up reaches the
     * waiters a millisecond late. Returns false, changing nothing, where the driver differs.
     */
    static boolean skipTrailingPeek(Connection c) {
        return PgDriver.skipPeek(c);
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            notifyAll();
            t = thread;
        }
        if (t != null) {
            try {
                t.join(2 * POLL_NOTIFICATIONS_MS + 1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
