package dev.latchkey.gcs;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.gcs.testserver.Adversity;
import dev.latchkey.gcs.testserver.GcsTestServer;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.ServerClock;
import java.time.Duration;

/**
 * The kit's {@link ServerClock} on {@code gs://}: a {@link GcsTestServer} of its own, started once
 * per JVM on first use, with GCS's one write per second to an object and the shared server's
 * {@linkplain Adversity#seededFrom seeded adversity} (its seed printed, {@code -Dlatchkey.test.gcs.seed=N}
 * repeats it). {@link #step} steps the server's clock, front end and storage alike
 * ({@link GcsTestServer#stepClock}), effective from the next request. Its own server, not the shared
 * one, because the kit's other tests run beside the two server-clock tests and a step would age their records too.
 * Managers open by URI, each with its own client.
 */
final class GcsClockServer implements ServerClock {
    private static final class Started {
        static final GcsClockServer SERVER = new GcsClockServer(GcsTestServer.start(0,
                GcsTestServer.DEFAULT_OBJECT_WRITE_INTERVAL, Adversity.seededFrom("latchkey.test.gcs.seed")));
    }

    private final GcsTestServer server;
    private final String uri;

    private GcsClockServer(GcsTestServer server) {
        this.server = server;
        this.uri = server.uri("latchkey", "clock");
    }

    /** The server, started on first call; it serves until the JVM exits. */
    static GcsClockServer get() {
        return Started.SERVER;
    }

    @Override
    public LockManager open(LockContext context) {
        return Latchkey.open(uri, context);
    }

    /** Takes effect at once: the server is in this JVM, and its next answer reads the stepped clock. */
    @Override
    public void step(Duration offset) {
        server.stepClock(offset);
    }
}
