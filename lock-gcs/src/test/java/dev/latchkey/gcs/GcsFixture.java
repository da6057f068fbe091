package dev.latchkey.gcs;

import dev.latchkey.gcs.testserver.GcsTestServer;
import dev.latchkey.spi.LockUri;

/**
 * The GCS the tests use: {@code $LATCHKEY_TEST_GCS_URI} if set (a real bucket, or an emulator such
 * as fake-gcs-server), else one {@link GcsTestServer} started in this JVM on a free port, with
 * bucket {@code latchkey}, for the whole run. Tests keep apart by key (the TCK tags every key).
 */
final class GcsFixture {
    static final String ENV = "LATCHKEY_TEST_GCS_URI";
    private static String uri;

    private GcsFixture() {}

    /** The {@code gs://} URI of the shared test bucket and prefix. */
    static synchronized String uri() {
        if (uri == null) {
            String fromEnv = System.getenv(ENV);
            uri = fromEnv != null && !fromEnv.isBlank() ? fromEnv.trim() : GcsTestServer.start().uri("latchkey", "locks");
        }
        return uri;
    }

    /** A fresh, independent store client on {@link #uri()}. */
    static GcsConditionalStore newStore() {
        return GcsLockProvider.store(LockUri.parse(uri()));
    }
}
