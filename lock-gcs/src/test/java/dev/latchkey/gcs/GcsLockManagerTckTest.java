package dev.latchkey.gcs;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;

/**
 * The full lock contract on {@code gs://}, against the in-process GCS test server (or
 * {@code $LATCHKEY_TEST_GCS_URI}). Each manager has its own GCS client and connections.
 */
class GcsLockManagerTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(GcsFixture.uri(), context);
    }

    /** The test server is a real HTTP server: contender JVMs reach it on loopback too. */
    @Override
    protected String uriForOtherProcesses() {
        return GcsFixture.uri();
    }

    /**
     * 2 s rather than 1 s: the server's {@code Date} has whole seconds, so a stale record can be
     * recognised up to a second late (never early); the waits must leave room for that.
     */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(2);
    }
}
