package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.NoCredentials;
import com.google.cloud.ServiceOptions;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.gcs.testserver.GcsTestServer;
import dev.latchkey.gcs.testserver.GcsTestServer.LostReply;
import dev.latchkey.gcs.testserver.GcsTestServer.Request;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link GcsConditionalStore} under GCS's one write per second to an object, on the test server: a
 * write refused for the rate is "not written" (empty / false), answered by one request; this
 * store's own writes of one object never come too fast; a write whose reply is lost is an unknown
 * outcome (an exception), or, once the client's retry finds it landed, a lost race.
 */
class GcsConditionalStoreWriteLimitTest {
    private static final String BUCKET = "write-limit";
    private static final byte[] MINE = "mine".getBytes(StandardCharsets.UTF_8);

    private static GcsConditionalStore store(GcsTestServer server, String prefix) {
        server.createBucket(BUCKET);
        return GcsStoreFactory.store(LockUri.parse("gs://" + BUCKET + "/" + prefix + "?endpoint=" + server.endpoint()
                + "&project=test&timeout=5s"));
    }

    /** Another client of the server, without retries, whose writes the store then runs into. */
    private static Storage other(GcsTestServer server) {
        return StorageOptions.http().setHost(server.endpoint()).setProjectId("test")
                .setCredentials(NoCredentials.getInstance()).setRetrySettings(ServiceOptions.getNoRetrySettings())
                .build().getService();
    }

    @Test
    void minWriteIntervalIsGcsOneSecond() {
        try (GcsTestServer server = GcsTestServer.start(); GcsConditionalStore store = store(server, "interval")) {
            assertThat(store.minWriteInterval()).isEqualTo(Duration.ofSeconds(1));
        }
    }

    /**
     * Create, replace and delete right after another client's write of the object: refused, nothing
     * changes, and the answer takes one request (the client does not retry a 429). A server limit
     * of 5 s leaves a loaded machine room between the other client's write and the store's.
     */
    @Test
    void writesRefusedForTheRateAreNotWrittenInOneRequest() throws Exception {
        Duration interval = Duration.ofSeconds(5);
        try (GcsTestServer server = GcsTestServer.start(0, interval); Storage other = other(server);
             GcsConditionalStore store = store(server, "refused")) {
            BlobId theirs = BlobId.of(BUCKET, "refused/theirs.lock");
            long generation = other.create(BlobInfo.newBuilder(theirs).build(), "theirs".getBytes(StandardCharsets.UTF_8),
                    Storage.BlobTargetOption.doesNotExist()).getGeneration();
            String version = Long.toString(generation);

            int before = server.requestCount();
            assertThat(store.replace("theirs", version, MINE)).as("replace within a second of their write").isEmpty();
            assertThat(store.delete("theirs", version)).as("delete within a second of their write").isFalse();
            assertThat(server.requestCount() - before).as("requests for two refused writes").isEqualTo(2);
            StoredRecord still = store.read("theirs").orElseThrow();
            assertThat(still.version()).isEqualTo(version);
            assertThat(still.data()).isEqualTo("theirs".getBytes(StandardCharsets.UTF_8));

            // a create is refused where the object was deleted less than the interval ago
            BlobId gone = BlobId.of(BUCKET, "refused/gone.lock");
            long created = other.create(BlobInfo.newBuilder(gone).build(), MINE, Storage.BlobTargetOption.doesNotExist())
                    .getGeneration();
            deleteOnceAdmitted(other, gone, created, interval);
            before = server.requestCount();
            assertThat(store.create("gone", MINE)).as("create within a second of a delete").isEmpty();
            assertThat(server.requestCount() - before).as("requests for a refused create").isEqualTo(1);
            assertThat(store.read("gone")).isEmpty();
        }
    }

    /** Retries the delete every 100 ms while the limit refuses it (the object was written just now). */
    private static void deleteOnceAdmitted(Storage other, BlobId id, long generation, Duration interval) throws Exception {
        long start = System.nanoTime();
        while (true) {
            try {
                assertThat(other.delete(id, Storage.BlobSourceOption.generationMatch(generation))).isTrue();
                return;
            } catch (StorageException e) {
                assertThat(e.getCode()).isEqualTo(429);
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(interval.plusSeconds(30));
                Thread.sleep(100);
            }
        }
    }

    /**
     * Back-to-back writes of one object through one store all land: each waits until a second has
     * passed since the reply to the one before, which the server applied before it replied.
     */
    @Test
    void ownWritesOfOneObjectAreSpacedSoNoneIsRefused() {
        try (GcsTestServer server = GcsTestServer.start(); GcsConditionalStore store = store(server, "own")) {
            String v1 = store.create("n", MINE).orElseThrow();
            long firstReply = System.nanoTime();
            String v2 = store.replace("n", v1, "second".getBytes(StandardCharsets.UTF_8))
                    .orElseThrow(() -> new AssertionError("replace right after the store's own create was refused"));
            long secondReply = System.nanoTime();
            assertThat(Duration.ofNanos(secondReply - firstReply)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
            assertThat(store.delete("n", v2)).as("delete right after the store's own replace").isTrue();
            assertThat(store.read("n")).isEmpty();
        }
    }

    /** Both the upload and the client's retry applied, both replies lost: the outcome is unknown. */
    @Test
    void aWriteWhoseEveryReplyIsLostIsARetriableError() {
        try (GcsTestServer server = GcsTestServer.start(); GcsConditionalStore store = store(server, "lost")) {
            server.loseReplies(Request.UPLOAD, BUCKET, "lost/n.lock", 2, LostReply.SERVICE_UNAVAILABLE);
            assertThatThrownBy(() -> store.create("n", MINE)).isInstanceOfSatisfying(LockBackendException.class, e -> {
                assertThat(e.isRetriable()).isTrue();
                assertThat(e.getMessage()).contains("HTTP 503").contains("lost/n.lock");
            });
            assertThat(server.lostReplyCount()).as("replies lost: the upload and the client's retry").isEqualTo(2);
            assertThat(store.read("n").map(StoredRecord::data)).as("the create landed").contains(MINE);
        }
    }

    /**
     * The first reply lost, the client retries; the retry finds its own write there and gets 412:
     * "not written" as far as the store can tell. The lease engine reads the record and finds its
     * own lease.
     */
    @Test
    void aLostReplyRetriedByTheClientReadsAsALostRace() {
        try (GcsTestServer server = GcsTestServer.start(); GcsConditionalStore store = store(server, "retried")) {
            server.loseReplies(Request.UPLOAD, BUCKET, "retried/n.lock", 1, LostReply.CONNECTION_CLOSED);
            assertThat(store.create("n", MINE)).isEmpty();
            assertThat(server.lostReplyCount()).isEqualTo(1);
            assertThat(store.read("n").map(StoredRecord::data)).as("the first attempt landed").contains(MINE);
        }
    }
}
