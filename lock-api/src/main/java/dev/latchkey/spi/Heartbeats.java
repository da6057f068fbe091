package dev.latchkey.spi;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one scheduler that renews every lease of the JVM and fires their deadlines: two daemon
 * threads however many leases are held (10,000 leases cost 10,000 small scheduled tasks, not
 * threads). A renewal blocks its thread for one store round trip, so a slow store delays other
 * leases' heartbeats by that much; heartbeat intervals (TTL/3 by default) leave room for it.
 */
public final class Heartbeats {
    /** Threads of the shared scheduler. */
    public static final int THREADS = 2;

    private static final ScheduledThreadPoolExecutor SCHEDULER = create();

    private Heartbeats() {}

    public static ScheduledThreadPoolExecutor scheduler() {
        return SCHEDULER;
    }

    private static ScheduledThreadPoolExecutor create() {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "latchkey-heartbeat-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(THREADS, factory);
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }
}
