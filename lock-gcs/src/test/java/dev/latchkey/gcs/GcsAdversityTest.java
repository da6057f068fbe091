package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.LockManager;
import dev.latchkey.gcs.testserver.Adversity;
import dev.latchkey.gcs.testserver.GcsTestServer;
import dev.latchkey.gcs.testserver.GcsTestServer.AdversityCounts;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.CriticalSectionChecker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The backend against a test server doing, on purpose, what GCS may do and a client may not
 * expect ({@link Adversity}): a store that ignores preconditions is refused by the probe on open;
 * missing, wrong and read-only credentials are clear errors that are not retried; and under chaos
 * (requests failing on their own, also after a write was applied) contending managers never let
 * two holders in. Seeds come from {@code -Dlatchkey.test.gcs.seed} if set, else at random; the
 * server prints its seed.
 *
 * <p>The tests run concurrently, each on a server of its own: most of their time is GCS's pace of
 * one write per second to an object.
 */
@Execution(ExecutionMode.CONCURRENT)
class GcsAdversityTest {
    private static final String SEED = "latchkey.test.gcs.seed";
    private static final String TOKEN = "ya29.test-token-that-must-never-be-printed";
    /**
     * Share of requests failing on their own in the chaos test. High, because one key takes about
     * one applied write a second, and only a tenth of those (half the failed ones) lose their answer.
     */
    private static final double CHAOS = 0.2;

    private static String uri(GcsTestServer server, String prefix, String extra) {
        return server.uri("adversity", prefix) + extra;
    }

    @Test
    void aStoreIgnoringPreconditionsIsRefusedOnOpenUnlessTheProbeIsOff() {
        try (GcsTestServer server = GcsTestServer.start(0, GcsTestServer.DEFAULT_OBJECT_WRITE_INTERVAL,
                Adversity.seededFrom(SEED).ignoringPreconditions())) {
            LockBackendException refused = catchThrowableOfType(() -> Latchkey.open(uri(server, "probe", "")),
                    LockBackendException.class);
            assertThat(refused).as("opening a manager on a store that ignores ifGenerationMatch").isNotNull();
            assertThat(refused.isRetriable()).isFalse();
            assertThat(refused.getMessage()).contains("gs://adversity/probe/").contains(server.endpoint())
                    .contains("ignores ifGenerationMatch=0").contains("a generation the object does not have")
                    .contains("probe=false");

            // the user's way out (after `latchkey check`): nothing is sent before the first lock
            int before = server.requestCount();
            try (LockManager m = Latchkey.open(uri(server, "probe", "&probe=false"))) {
                assertThat(server.requestCount()).as("requests sent by an open without the probe").isEqualTo(before);
                try (Lease lease = m.tryAcquire("k").orElseThrow()) {
                    assertThat(lease.isValid()).isTrue();
                }
            }
        }
    }

    /**
     * A record's age is never more than the time since its write was sent, though the front end's
     * {@code Date} runs a constant {@link Adversity#DEFAULT_CLOCK_DRIFT} ahead of the storage's
     * {@code updated}: an overstated age would let a contender take a live lease early.
     */
    @Test
    void aFrontEndAheadOfTheStorageNeverMakesARecordOlder() {
        try (GcsTestServer server = GcsTestServer.start(0, GcsTestServer.DEFAULT_OBJECT_WRITE_INTERVAL,
                Adversity.seededFrom(SEED).frontEndAhead(Adversity.DEFAULT_CLOCK_DRIFT));
             GcsConditionalStore store = GcsStoreFactory.store(LockUri.parse(uri(server, "age", "")))) {
            for (int i = 0; i < 20; i++) {
                long sent = System.nanoTime();
                store.create("age-" + i, new byte[] {1}).orElseThrow();
                Duration age = store.read("age-" + i).orElseThrow().age();
                Duration since = Duration.ofNanos(System.nanoTime() - sent);
                assertThat(age).as("age of a record written %s ago", since).isNotNull().isLessThanOrEqualTo(since);
            }
        }
    }

    /** The first probe under a prefix creates its object (three requests); later ones change nothing (two). */
    @Test
    void anHonestButAdversarialStorePassesTheProbe() {
        try (GcsTestServer server = GcsTestServer.start(0, GcsTestServer.DEFAULT_OBJECT_WRITE_INTERVAL, Adversity.seededFrom(SEED))) {
            String u = uri(server, "honest", "");
            int before = server.requestCount();
            try (LockManager first = Latchkey.open(u)) {
                assertThat(server.requestCount() - before).as("requests of the first probe").isEqualTo(3);
                int then = server.requestCount();
                try (LockManager second = Latchkey.open(u)) {
                    assertThat(server.requestCount() - then).as("requests of a later probe").isEqualTo(2);
                    try (Lease lease = second.tryAcquire("k").orElseThrow()) {
                        assertThat(first.tryAcquire("k")).isEmpty();
                        assertThat(lease.isValid()).isTrue();
                    }
                }
            }
        }
    }

    @Test
    void missingWrongAndReadOnlyCredentialsAreClearErrorsNotRetried() throws Exception {
        try (GcsTestServer server = GcsTestServer.start(0, GcsTestServer.DEFAULT_OBJECT_WRITE_INTERVAL,
                Adversity.seededFrom(SEED).token(TOKEN, true).token("ya29.read-only", false))) {
            server.createBucket("adversity");
            // the URI route with an endpoint sends no credentials
            assertRefused(server, () -> Latchkey.open(uri(server, "creds", "")), "not authenticated");
            try (Storage wrong = client(server, "ya29.wrong")) {
                assertRefused(server, () -> GcsLocks.open(wrong, "adversity", GcsLocks.options().prefix("creds")), "not authenticated");
            }
            try (Storage readOnly = client(server, "ya29.read-only")) {
                assertRefused(server, () -> GcsLocks.open(readOnly, "adversity", GcsLocks.options().prefix("creds")), "permission denied");
            }
            try (Storage good = client(server, TOKEN);
                 LockManager m = GcsLocks.open(good, "adversity", GcsLocks.options().prefix("creds"));
                 Lease lease = m.tryAcquire("k").orElseThrow()) {
                assertThat(lease.isValid()).isTrue();
            }
        }
    }

    /**
     * Nothing retries the refusal, except that Google's auth library, on a 401, refreshes a
     * refreshable credential once and resends: at most two requests.
     */
    private static void assertRefused(GcsTestServer server, Runnable open, String problem) {
        int before = server.requestCount();
        LockBackendException e = catchThrowableOfType(open::run, LockBackendException.class);
        assertThat(e).as("opening with bad credentials (%s)", problem).isNotNull();
        assertThat(e.isRetriable()).as("retriable, for: %s", e.getMessage()).isFalse();
        assertThat(e.getMessage()).contains(problem).contains("gs://adversity/creds").doesNotContain("ya29.");
        assertThat(server.requestCount() - before).as("requests sent: the refusal is not retried").isBetween(1, 2);
    }

    /** A client whose credentials always hold {@code token}, also when refreshed (as a real one's would after a 401). */
    private static Storage client(GcsTestServer server, String token) {
        AccessToken access = new AccessToken(token, Date.from(Instant.now().plus(Duration.ofHours(1))));
        GoogleCredentials credentials = new GoogleCredentials(access) {
            private static final long serialVersionUID = 1L;

            @Override
            public AccessToken refreshAccessToken() {
                return access;
            }
        };
        return StorageOptions.http().setHost(server.endpoint()).setProjectId("test")
                .setCredentials(credentials).build().getService();
    }

    /**
     * Three managers, two threads each, take one key in turn while {@value #CHAOS} of requests fail
     * on their own (half of the failed writes applied), until an answer to an applied write was lost
     * too: failures are allowed, two holders at once are not.
     */
    @Test
    void chaosNeverLetsTwoHoldersIn() throws Exception {
        int managers = 3;
        int threads = 2;
        int sectionsWanted = 6;
        try (GcsTestServer server = GcsTestServer.start(0, GcsTestServer.DEFAULT_OBJECT_WRITE_INTERVAL,
                Adversity.seededFrom(SEED).chaos(CHAOS))) {
            // no probe: its requests would only add a chance of failing to open
            String u = uri(server, "chaos", "&probe=false&timeout=1s");
            List<LockManager> opened = new ArrayList<>();
            CriticalSectionChecker checker = new CriticalSectionChecker();
            AtomicInteger sections = new AtomicInteger();
            AtomicInteger failures = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(managers * threads);
            try {
                for (int i = 0; i < managers; i++) opened.add(Latchkey.open(u));
                List<Future<?>> running = new ArrayList<>();
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                for (LockManager m : opened) {
                    for (int t = 0; t < threads; t++) {
                        running.add(pool.submit(() -> {
                            // until enough sections, and answers lost after applied writes, were seen
                            while ((sections.get() < sectionsWanted || server.adversityCounts().faultsAfterWrite() < 1)
                                    && System.nanoTime() < deadline) {
                                try (Lease lease = m.acquire("key", Duration.ofSeconds(10), LeaseOptions.ttl(Duration.ofSeconds(3)))) {
                                    checker.enter(lease.fencingToken());
                                    checker.work();
                                    checker.exit();
                                    sections.incrementAndGet();
                                } catch (LockBackendException | LockTimeoutException | LeaseLostException e) {
                                    failures.incrementAndGet(); // allowed: a failure, a timeout, a lease lost to one
                                }
                            }
                            return null;
                        }));
                    }
                }
                for (Future<?> f : running) f.get(3, TimeUnit.MINUTES);
            } finally {
                pool.shutdownNow();
                opened.forEach(LockManager::close);
            }
            AdversityCounts counts = server.adversityCounts();
            String seen = checker.summary() + "; " + failures + " failed attempts; " + counts;
            System.err.println("chaos under contention: " + seen); // the numbers, for the CI log
            assertThat(checker.overlaps()).as(seen).isZero();
            assertThat(checker.tokenOrderViolations()).as(seen).isEmpty();
            assertThat(sections.get()).as(seen).isGreaterThanOrEqualTo(sectionsWanted);
            assertThat(counts.faultsAfterWrite()).as("answers to applied writes lost: " + seen).isPositive();
            assertThat(counts.faultsBefore()).as("requests failed before being applied: " + seen).isPositive();
        }
    }
}
