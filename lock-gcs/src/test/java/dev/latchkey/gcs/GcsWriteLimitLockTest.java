package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.gcs.testserver.GcsTestServer;
import dev.latchkey.gcs.testserver.GcsTestServer.LostReply;
import dev.latchkey.gcs.testserver.GcsTestServer.Request;
import dev.latchkey.spi.LockNames;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lock through {@code Latchkey.open("gs://…")} against the test server with GCS's one write per
 * second to an object on: keys change hands and are re-taken without errors, a TTL too short for
 * that limit is refused before any request, and a claim whose reply was lost leaves no phantom
 * holder.
 */
class GcsWriteLimitLockTest {
    private static final String BUCKET = "lock-limit";
    private static final String PREFIX = "locks";
    /** Far above what any step here needs (a few seconds at one write per second). */
    private static final Duration SOON = Duration.ofSeconds(30);
    private static GcsTestServer server;
    private static String uri;

    @BeforeAll
    static void start() {
        server = GcsTestServer.start(); // the default: one write per second to an object
        uri = server.uri(BUCKET, PREFIX);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static LeaseOptions longLease() {
        return LeaseOptions.ttl(Duration.ofSeconds(60));
    }

    /** A waiter in another manager gets the key once the holder releases it; its acquire does not throw. */
    @Test
    void handOffToAWaiterInAnotherManager() throws Exception {
        try (LockManager a = Latchkey.open(uri); LockManager b = Latchkey.open(uri)) {
            Lease first = a.tryAcquire("handoff", longLease()).orElseThrow();
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> b.acquire("handoff", SOON, longLease()));
            first.release();
            Lease second = waiter.get(SOON.toSeconds() + 10, TimeUnit.SECONDS);
            assertThat(second.isValid()).isTrue();
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            assertThat(a.inspect("handoff").map(LockInfo::leaseId)).contains(second.leaseId());
            second.release();
        }
    }

    @Test
    void releaseRightAfterAcquireAndTryAcquireRightAfterOwnRelease() {
        try (LockManager a = Latchkey.open(uri)) {
            Lease first = a.tryAcquire("again", longLease()).orElseThrow();
            first.release();
            assertThat(first.isValid()).isFalse();
            assertThat(a.inspect("again")).as("after a release right after the acquire").isEmpty();
            Lease second = a.tryAcquire("again", longLease())
                    .orElseThrow(() -> new AssertionError("tryAcquire right after this manager's own release failed"));
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            second.release();
        }
    }

    /**
     * The record was written (released) by another manager less than a second ago, so the first
     * claim is refused; nobody holds the key, so tryAcquire takes it rather than answering "held".
     */
    @Test
    void tryAcquireRightAfterAnotherManagersRelease() {
        try (LockManager a = Latchkey.open(uri); LockManager b = Latchkey.open(uri)) {
            a.tryAcquire("next", longLease()).orElseThrow().release();
            Lease taken = b.tryAcquire("next", longLease())
                    .orElseThrow(() -> new AssertionError("tryAcquire of a key released elsewhere just now failed"));
            assertThat(a.inspect("next").map(LockInfo::leaseId)).contains(taken.leaseId());
            taken.release();
        }
    }

    /** Heartbeat TTL/3 under one second would exceed the limit: refused, naming the minimum, before any request. */
    @Test
    void aTtlBelowThreeSecondsIsRefusedNamingTheMinimum() {
        try (LockManager a = Latchkey.open(uri)) {
            int before = server.requestCount();
            assertThatThrownBy(() -> a.tryAcquire("short", LeaseOptions.ttl(Duration.ofSeconds(1))))
                    .isExactlyInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at least 3000 ms")
                    .hasMessageContaining("gs://" + BUCKET);
            assertThatThrownBy(() -> a.acquire("short", SOON, LeaseOptions.ttl(Duration.ofMillis(2999))))
                    .isExactlyInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at least 3000 ms");
            assertThat(server.requestCount()).as("requests sent for refused TTLs").isEqualTo(before);
            a.tryAcquire("short", LeaseOptions.ttl(Duration.ofSeconds(3))).orElseThrow().release();
        }
    }

    /** What fails, beyond the claiming upload's reply. */
    enum Lost {
        /**
         * The upload's connection is dropped after the claim landed; the client's retry finds the
         * claim there (412), and the engine reads its lease back.
         */
        UPLOAD_REPLY,
        /**
         * 503 after the claim landed, for the upload, its retry and both attempts at the read-back:
         * nobody can tell whether the claim landed, so the engine must withdraw it later. The key is
         * one the manager released, so the claim is its first request (no read before it). (503, not
         * dropped connections: the JDK resends a GET once by itself after a dropped connection.)
         */
        UPLOAD_AND_READ_BACK
    }

    /**
     * The claiming upload lands but its reply is lost: tryAcquire returns the lease or throws, and
     * either way another manager gets the key long before the 60 s TTL — it was released, or the
     * unconfirmed claim withdrawn. No phantom holder.
     */
    @ParameterizedTest
    @EnumSource(Lost.class)
    void aClaimWhoseReplyIsLostLeavesNoPhantomHolder(Lost lost) throws Exception {
        String key = "lost-claim-" + lost.name().toLowerCase();
        String object = PREFIX + "/" + LockNames.encode(key) + ".lock";
        try (LockManager a = Latchkey.open(uri); LockManager b = Latchkey.open(uri)) {
            if (lost == Lost.UPLOAD_AND_READ_BACK) a.tryAcquire(key, longLease()).orElseThrow().release();
            int lostBefore = server.lostReplyCount();
            if (lost == Lost.UPLOAD_REPLY) {
                server.loseReplies(Request.UPLOAD, BUCKET, object, 1, LostReply.CONNECTION_CLOSED);
            } else {
                server.loseReplies(Request.UPLOAD, BUCKET, object, 2, LostReply.SERVICE_UNAVAILABLE);
                server.loseReplies(Request.GET, BUCKET, object, 2, LostReply.SERVICE_UNAVAILABLE);
            }
            Optional<Lease> claimed;
            try {
                claimed = a.tryAcquire(key, longLease());
                assertThat(claimed).as("tryAcquire of a free key whose claim landed").isPresent();
                assertThat(b.inspect(key).map(LockInfo::leaseId)).contains(claimed.get().leaseId());
            } catch (LockBackendException e) {
                assertThat(e.isRetriable()).as("retriable: %s", e.getMessage()).isTrue();
                claimed = Optional.empty();
            }
            assertThat(server.lostReplyCount() - lostBefore).as("replies lost")
                    .isEqualTo(lost == Lost.UPLOAD_REPLY ? 1 : 4);
            claimed.ifPresent(Lease::release);
            Lease next = b.acquire(key, Duration.ofSeconds(15), longLease()); // a phantom would block it for 60 s
            assertThat(next.isValid()).isTrue();
            next.release();
        }
    }
}
