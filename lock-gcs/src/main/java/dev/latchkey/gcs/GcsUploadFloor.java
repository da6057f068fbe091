package dev.latchkey.gcs;

import dev.latchkey.bench.Baseline;
import dev.latchkey.spi.LockUri;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;

/**
 * Floor of {@code gs://} for {@code latchkey bench}: two unconditional uploads of a body the size of
 * a lease record (acquire = one, release = the other), each the very request a record write sends
 * (body plus the record in metadata) minus {@code ifGenerationMatch}, through a client built from
 * the URI exactly as the backend builds its own (endpoint, credentials, timeouts, one retry). An
 * uncontended acquire+release of the lock is a metadata read and two conditional uploads, so this is
 * what it could cost with nothing but the writes.
 *
 * <p>The object is {@code PREFIX/.latchkey-bench-floor-<random>}: record names never start with
 * {@code .} and records end in {@code .lock}, so it can clash with no lock and no listing shows it.
 * It is deleted on close. Loaded only where lock-bench is on the class path (optional dependency).
 */
public final class GcsUploadFloor implements Baseline {
    /**
     * About the size of the records the lease engine writes in a bench: magic line, state, key,
     * lease id, owner {@code user@host/pid}, token, times and TTL come to 202-206 bytes with a
     * two-letter host name, about 220 with a usual one.
     */
    static final int RECORD_BYTES = 224;
    private static final byte[] BODY = body();

    private final String leaf = ".latchkey-bench-floor-" + UUID.randomUUID().toString().substring(0, 8);

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("gs");
    }

    @Override
    public Kind kind() {
        return Kind.FLOOR;
    }

    @Override
    public String description() {
        return "2 unconditional uploads of " + RECORD_BYTES + " B";
    }

    @Override
    public Session open(LockUri uri) {
        GcsConditionalStore store = GcsLockProvider.store(uri);
        return new Session() {
            private boolean closed;

            @Override
            public void acquire() {
                store.uploadLoose(leaf, BODY);
            }

            @Override
            public void release() {
                store.uploadLoose(leaf, BODY);
            }

            @Override
            public void close() {
                if (closed) return;
                closed = true;
                try {
                    store.deleteLoose(leaf);
                } finally {
                    store.close();
                }
            }
        };
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
