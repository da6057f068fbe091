package dev.latchkey.gcs;

import com.google.cloud.storage.Storage;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import dev.latchkey.tck.ServerClock;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The full lock contract on {@code gs://}, against the in-process GCS test server (or
 * {@code $LATCHKEY_TEST_GCS_URI}) with its one write per second to an object on, as on GCS. Each
 * manager has its own GCS client and connections.
 *
 * <p>That limit sets the pace: a manager writes a lock record at most once a second, so a heartbeat
 * (TTL/3) needs a TTL of at least 3 s, and one key changes hands about once every two seconds
 * (acquire, then release, a second apart), however many clients want it. The contention tests are
 * sized for that: 24 critical sections in each, not the default 200.
 *
 * <p>Through the application's-client route: the managers of this JVM open on one shared
 * {@link Storage} built as an application would ({@link GcsLocks}), while the other processes open
 * the same bucket and prefix by URI, so both routes must exclude each other. (The URI route's
 * contract runs in {@link GcsConditionalStoreTckTest} and the other {@code gs://} tests.)
 *
 * <p>The tests run concurrently: each has its own keys and managers, and most of their time is waiting
 * (TTLs, the store's pace).
 */
@Execution(ExecutionMode.CONCURRENT)
class GcsLockManagerTckTest extends LockManagerContract {
    private static Storage storage;

    @BeforeAll
    static void openStorage() {
        storage = GcsFixture.rawClient(LockUri.parse(GcsFixture.uri()).param("endpoint").orElse(null));
    }

    /** The application closes its client; the managers never did. */
    @AfterAll
    static void closeStorage() throws Exception {
        storage.close();
    }

    @Override
    protected LockManager newManager(LockContext context) {
        LockUri uri = LockUri.parse(GcsFixture.uri());
        return GcsLocks.open(storage, uri.host(), GcsLocks.options().prefix(uri.path().replaceFirst("^/", "")), context);
    }

    /** A test server of its own for the two server-clock tests: a step of the shared one's clock would disturb the rest. */
    @Override
    protected ServerClock serverClock() {
        return GcsClockServer.get();
    }

    /** The test server is a real HTTP server: contender JVMs reach it on loopback too. */
    @Override
    protected String uriForOtherProcesses() {
        return GcsFixture.uri();
    }

    /**
     * 3 s: the heartbeat, TTL/3, may not be faster than the store's one write per second. (The
     * server's {@code Date} has whole seconds, so a stale record is recognised up to a second late,
     * never early; 3 s leaves the waits room for that.)
     */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    /** 4 managers x 2 threads x 3 rounds: 24 sections on one key, about two seconds each. */
    @Override
    protected int contentionRounds() {
        return 3;
    }

    /** 4 JVMs x 3 rounds: 12 sections on one key. */
    @Override
    protected int processRounds() {
        return 3;
    }
}
