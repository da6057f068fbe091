package dev.latchkey.bench;

import dev.latchkey.spi.LockUri;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Something {@code latchkey bench} measures beside a backend, in the same run, on the same machine
 * and against the same store, so that the ratio means something even when absolute numbers do not:
 * <ul>
 *   <li>a {@link Kind#FLOOR floor}: the cheapest way to do one round of what the backend does,
 *       without Latchkey (e.g. {@code SELECT 1}, a raw {@code pg_try_advisory_lock}+unlock, two
 *       unconditional uploads of the same size);</li>
 *   <li>a {@link Kind#PEER peer}: another library's lock over the same store.</li>
 * </ul>
 * A module adds baselines by listing implementations in
 * {@code META-INF/services/dev.latchkey.bench.Baseline}; a backend module does so through an
 * optional dependency on this module, so its users never load these classes. Schemes without a
 * baseline print none.
 */
public interface Baseline {

    enum Kind { FLOOR, PEER }

    /** Whether this baseline applies to URIs of {@code scheme}. */
    boolean supports(String scheme);

    Kind kind();

    /** What is measured, e.g. {@code pg_try_advisory_lock + pg_advisory_unlock}. */
    String description();

    /**
     * Whether {@link Session#acquireWaiting()} waits for another session's release, so the
     * handoff can be measured as for the backend.
     */
    default boolean hasHandoff() {
        return false;
    }

    /**
     * Whether, beside the backend named by {@code uri}, sessions of this object run {@link
     * Session#tryRound} on several threads at once, over keys they share, so the throughput under
     * contention (T threads over K keys) is measured for this baseline as for the backend and the
     * rates can be divided. A baseline that is the floor of one mode of a backend may spread beside
     * that mode only: each spreading baseline adds a warm-up and a measuring time to every run.
     */
    default boolean hasSpread(LockUri uri) {
        return false;
    }

    /**
     * Opens one session (a connection, a client) next to the backend named by {@code uri}. Every
     * session of one baseline object works on the same lock, so two sessions can hand it off.
     */
    Session open(LockUri uri) throws Exception;

    /** One session, used by one thread at a time. */
    interface Session extends AutoCloseable {
        /** The uncontended acquire (or first round trip) of one round. */
        void acquire() throws Exception;

        /** Waits until the lock is free and takes it; only called when {@link #hasHandoff()}. */
        default void acquireWaiting() throws Exception {
            throw new UnsupportedOperationException("no handoff");
        }

        /**
         * One acquire+release of key {@code key} (from 0 to K − 1), as the throughput phase does
         * with the lock: {@code false}, having done nothing else, when another session of this
         * baseline object holds that key. Sessions of one object share their K keys and run this on
         * different threads at once; only called when {@link #hasSpread}.
         */
        default boolean tryRound(int key) throws Exception {
            throw new UnsupportedOperationException("no spread");
        }

        /** The release (or second round trip) of one round; may do nothing. */
        void release() throws Exception;

        /** Closes the session and removes what it created (a table, an object); idempotent. */
        @Override
        void close() throws Exception;
    }

    /** Every installed baseline for {@code scheme}: floors first, then peers. */
    static List<Baseline> forScheme(String scheme) {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        List<Baseline> found = new ArrayList<>();
        for (Baseline b : ServiceLoader.load(Baseline.class, cl != null ? cl : Baseline.class.getClassLoader())) {
            if (b.supports(scheme)) found.add(b);
        }
        found.sort((x, y) -> x.kind().compareTo(y.kind()));
        return found;
    }
}
