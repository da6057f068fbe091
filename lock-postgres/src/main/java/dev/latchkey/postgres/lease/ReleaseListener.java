package dev.latchkey.postgres.lease;

import dev.latchkey.postgres.shared.PgDriver;
import dev.latchkey.postgres.shared.PgPool;
import dev.latchkey.postgres.shared.PgSettings;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
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
    private final ThreadFactory threads;
    /** Guards the fields below; a lock, not a monitor, so a waiting virtual thread does not pin its carrier. */
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled on every release, listener state change and close. */
    private final Condition changed = lock.newCondition();
    private final Map<String, long[]> waiting = new HashMap<>(); // key -> {waiters, version}
    private Thread thread;
    private boolean attempted;
    private boolean closed;

    ReleaseListener(PgPool<?> pool, String channel, ThreadFactory threads) {
        this.pool = pool;
        this.channel = channel;
        this.threads = threads;
    }

    /**
     * Declares interest in {@code key} (starting the listener on first use and waiting briefly
     * for its {@code LISTEN}). Pair with {@link #unregister}.
     */
    void register(String key, long startupWaitMillis) throws InterruptedException {
        lock.lock();
        try {
            if (thread == null && !closed) {
                thread = threads.newThread(this::run);
                thread.start();
            }
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startupWaitMillis);
            while (!attempted && !closed) {
                long left = until - System.nanoTime();
                if (left <= 0) break;
                changed.awaitNanos(left);
            }
            waiting.computeIfAbsent(key, k -> new long[2])[0]++;
        } finally {
            lock.unlock();
        }
    }

    /** The release count of a registered key, to pass to {@link #await}. */
    long version(String key) {
        lock.lock();
        try {
            long[] w = waiting.get(key);
            return w == null ? 0 : w[1];
        } finally {
            lock.unlock();
        }
    }

    void unregister(String key) {
        lock.lock();
        try {
            long[] w = waiting.get(key);
            if (w != null && --w[0] <= 0) waiting.remove(key);
        } finally {
            lock.unlock();
        }
    }

    /** Waits until {@code key} was released after {@code version} was read, or {@code millis} pass. */
    void await(String key, long version, long millis) throws InterruptedException {
        lock.lock();
        try {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            while (!closed) {
                long[] w = waiting.get(key);
                if (w == null || w[1] != version) return;
                long left = until - System.nanoTime();
                if (left <= 0) return;
                changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    private void released(String key) {
        lock.lock();
        try {
            long[] w = waiting.get(key);
            if (w != null) {
                w[1]++;
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    private void state(boolean nowListening) {
        lock.lock();
        try {
            attempted = true;
            if (!nowListening) waiting.values().forEach(w -> w[1]++); // nobody can rely on a wake-up now: poll
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        while (true) {
            if (isClosed()) return;
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
                    if (isClosed()) return;
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
            lock.lock();
            try {
                if (closed) return;
                try {
                    changed.await(1, TimeUnit.SECONDS); // reconnect back-off; close() wakes it
                } catch (InterruptedException e) {
                    return;
                }
            } finally {
                lock.unlock();
            }
        }
    }

    private boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
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
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
            t = thread;
        } finally {
            lock.unlock();
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
