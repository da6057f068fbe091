package dev.latchkey.bench;

import dev.latchkey.spi.LockUri;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The floor of an object store: two unconditional uploads of a body the size of a lease record
 * (acquire = one, release = the other) to one object beside the lock records, through a client
 * built from the URI exactly as the backend builds its own. An uncontended acquire+release of the
 * lease engine is two conditional uploads when it re-takes a key it released, so the ratio prices
 * the conditions and the engine, not the store.
 *
 * <p>The object's leaf name is {@code .latchkey-bench-floor-<random>}: record names never start with
 * {@code .} and records end in {@code .lock}, so it clashes with no lock and no listing shows it. It
 * is deleted on close. A backend supplies the two requests ({@link #target}).
 *
 * <p>All sessions of one object share one client, as the threads of the lock share one manager's
 * (and so a store that paces writes per object, as GCS's one write a second, paces them across
 * threads): it is built by the first open session and closed with the last, under a lock held while
 * the client is built or closed, so no session gets a client that is being closed. Under contention,
 * key {@code i} is the object {@code <leaf>-i}: a round claims the key among this object's sessions
 * ({@link KeyClaims}: a key another thread claimed is busy, as a held key is for the lock, and no
 * two threads write one object at once) and makes the two uploads to it. Each session deletes the
 * objects it wrote on close.
 */
public abstract class UploadBaseline implements Baseline {
    /**
     * About the size of the records the lease engine writes in a bench: magic line, state, key,
     * lease id, owner {@code user@host/pid}, token, times and TTL come to 202-206 bytes with a
     * two-letter host name, about 220 with a usual one.
     */
    public static final int RECORD_BYTES = 224;
    private static final byte[] BODY = body();

    private final String leaf = ".latchkey-bench-floor-" + UUID.randomUUID().toString().substring(0, 8);
    private final KeyClaims claims = new KeyClaims();
    private final ReentrantLock sharing = new ReentrantLock();
    private Target shared;    // guarded by sharing; the client of the open sessions
    private int openSessions; // guarded by sharing

    /** The store's two requests on one object beside the records, and the client to close. */
    protected interface Target extends AutoCloseable {
        /** One unconditional upload of {@code body} to {@code leaf} under the URI's prefix. */
        void upload(String leaf, byte[] body);

        /** Deletes what {@link #upload} wrote; absent is fine. */
        void delete(String leaf);

        @Override
        void close();
    }

    /** The backend's client for {@code uri}, as its lock manager would build it. */
    protected abstract Target target(LockUri uri);

    /** The request's name in the store's own words, e.g. {@code PutObject}. */
    protected abstract String upload();

    @Override
    public final Kind kind() {
        return Kind.FLOOR;
    }

    @Override
    public final String description() {
        return "2 unconditional " + upload() + " of " + RECORD_BYTES + " B";
    }

    @Override
    public final boolean hasSpread(LockUri uri) {
        return true;
    }

    @Override
    public final Session open(LockUri uri) {
        Target target = share(uri);
        return new Session() {
            private final Set<Integer> written = new HashSet<>();
            private boolean closed;

            @Override
            public void acquire() {
                target.upload(leaf, BODY);
            }

            @Override
            public void release() {
                target.upload(leaf, BODY);
            }

            @Override
            public boolean tryRound(int key) {
                return claims.round(key, () -> {
                    written.add(key);
                    target.upload(leaf + "-" + key, BODY);
                    target.upload(leaf + "-" + key, BODY);
                });
            }

            @Override
            public void close() {
                if (closed) return;
                closed = true;
                try {
                    target.delete(leaf);
                    for (int key : written) target.delete(leaf + "-" + key);
                } finally {
                    unshare();
                }
            }
        };
    }

    /** The client of the open sessions, built for the first one; the bench opens them all for one URI. */
    private Target share(LockUri uri) {
        sharing.lock();
        try {
            if (shared == null) shared = target(uri);
            openSessions++;
            return shared;
        } finally {
            sharing.unlock();
        }
    }

    /** Closes the shared client when the last session closes. */
    private void unshare() {
        sharing.lock();
        try {
            if (--openSessions > 0) return;
            Target last = shared;
            shared = null;
            last.close();
        } finally {
            sharing.unlock();
        }
    }

    /** Text like a record's, {@link #RECORD_BYTES} long. */
    private static byte[] body() {
        byte[] body = new byte[RECORD_BYTES];
        Arrays.fill(body, (byte) 'x');
        byte[] head = "latchkey-bench-floor 1\n".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(head, 0, body, 0, head.length);
        body[RECORD_BYTES - 1] = '\n';
        return body;
    }
}
