package dev.latchkey.postgres.advisory;

import dev.latchkey.spi.LeaseRuntime;
import java.time.Duration;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Notices within {@link #INTERVAL} when the server ends the session of a held advisory lease
 * ({@code pg_terminate_backend}, a shutdown, a crash of another backend, its idle limit), without
 * waiting for the lease's next heartbeat: a server that ends a session first sends the client why (an
 * error or a warning), and {@link AdvisoryLease#checkSession} reads what has arrived on the socket
 * without a round trip and without blocking. A session that dies without a word (its backend killed
 * outright, the network gone) is found by the next renewal, as before.
 *
 * <p>One sweep per manager, on the manager's renewers, while it holds leases; a lease whose session
 * is busy (a renewal under way) is skipped, since that renewal finds out itself. The cost is one
 * non-blocking socket check per held lease per sweep: about a microsecond, so 10,000 held leases take
 * some 10 ms of one core per sweep, 4 % of it at 250 ms. Adding a lease is one queue insertion; a
 * lease that has ended leaves the queue at the next sweep, so acquire and release pay nothing more.
 */
final class SessionWatch {
    static final Duration INTERVAL = Duration.ofMillis(250);

    private final LeaseRuntime runtime;
    private final Queue<AdvisoryLease> held = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();

    SessionWatch(LeaseRuntime runtime) {
        this.runtime = runtime;
    }

    void add(AdvisoryLease lease) {
        held.add(lease);
        if (!scheduled.get() && scheduled.compareAndSet(false, true)) runtime.later(INTERVAL, this::sweep);
    }

    private void sweep() {
        try {
            for (Iterator<AdvisoryLease> it = held.iterator(); it.hasNext(); ) {
                if (!it.next().checkSession()) it.remove();
            }
        } finally {
            scheduled.set(false);
            // a lease added while this sweep ran saw it scheduled: look again
            if (!held.isEmpty() && scheduled.compareAndSet(false, true)) runtime.later(INTERVAL, this::sweep);
        }
    }
}
