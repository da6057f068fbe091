package dev.latchkey.gcs.testserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.NoCredentials;
import com.google.cloud.ServiceOptions;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;
import dev.latchkey.gcs.testserver.GcsTestServer.LostReply;
import dev.latchkey.gcs.testserver.GcsTestServer.Request;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The test server's per-object write limit and its lost replies, through Google's own client with
 * its retries off (so every answer is the server's first) and raw HTTP.
 */
class WriteLimitAndLostRepliesTest {
    private static final String BUCKET = "limits";

    private static Storage client(GcsTestServer server) {
        return StorageOptions.http().setHost(server.endpoint()).setProjectId("test")
                .setCredentials(NoCredentials.getInstance()).setRetrySettings(ServiceOptions.getNoRetrySettings())
                .build().getService();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A limit no test outlives: the second write of a name is refused, whenever it comes. */
    @Test
    void aSecondWriteOfAnObjectWithinTheIntervalIs429AndChangesNothing() throws Exception {
        try (GcsTestServer server = GcsTestServer.start(0, Duration.ofHours(1)); Storage gcs = client(server)) {
            server.createBucket(BUCKET);
            BlobId id = BlobId.of(BUCKET, "limited/one");
            BlobInfo info = BlobInfo.newBuilder(id).build();
            Blob first = gcs.create(info, utf8("first"), Storage.BlobTargetOption.doesNotExist());
            long generation = first.getGeneration();

            assertRateLimited(() -> gcs.create(info, utf8("second"), Storage.BlobTargetOption.generationMatch(generation)));
            assertRateLimited(() -> gcs.update(first.toBuilder().setMetadata(Map.of("k", "v")).build()));
            assertRateLimited(() -> gcs.delete(id, Storage.BlobSourceOption.generationMatch(generation)));
            Blob after = gcs.get(id);
            assertThat(after.getGeneration()).as("generation after refused writes").isEqualTo(generation);
            assertThat(after.getMetageneration()).isEqualTo(first.getMetageneration());
            assertThat(after.getMetadata()).as("metadata after a refused patch").isNull();
            assertThat(gcs.readAllBytes(id)).isEqualTo(utf8("first"));

            // a write that would change nothing is a 412 whatever the rate; other names are not limited
            assertThatThrownBy(() -> gcs.create(info, utf8("stale"), Storage.BlobTargetOption.generationMatch(generation + 1)))
                    .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
            assertThat(gcs.create(BlobInfo.newBuilder(BUCKET, "limited/two").build(), utf8("x"),
                    Storage.BlobTargetOption.doesNotExist()).getGeneration()).isGreaterThan(generation);

            HttpURLConnection raw = (HttpURLConnection) URI.create(server.endpoint() + "/upload/storage/v1/b/" + BUCKET
                    + "/o?uploadType=media&name=limited%2Fone").toURL().openConnection();
            raw.setRequestMethod("POST");
            raw.setDoOutput(true);
            raw.getOutputStream().write(utf8("unconditional"));
            assertThat(raw.getResponseCode()).isEqualTo(429);
            assertThat(new String(raw.getErrorStream().readAllBytes(), StandardCharsets.UTF_8))
                    .contains("\"code\":429").contains("\"reason\":\"rateLimitExceeded\"").contains("limited/one");
        }
    }

    /**
     * Only applied writes start the interval: a client retrying every 100 ms is refused until the
     * interval has passed since the last applied write, and then gets in (were refusals to restart
     * the interval, it would be refused for ever).
     */
    @Test
    void refusedWritesDoNotRestartTheInterval() throws Exception {
        Duration interval = Duration.ofSeconds(2);
        try (GcsTestServer server = GcsTestServer.start(0, interval); Storage gcs = client(server)) {
            server.createBucket(BUCKET);
            BlobInfo info = BlobInfo.newBuilder(BUCKET, "limited/again").build();
            long before = System.nanoTime(); // the create is applied after this
            long generation = gcs.create(info, utf8("0"), Storage.BlobTargetOption.doesNotExist()).getGeneration();
            int refused = 0;
            Blob landed = null;
            while (landed == null) {
                assertThat(Duration.ofNanos(System.nanoTime() - before)).as("retrying a refused write")
                        .isLessThan(interval.plusSeconds(30));
                try {
                    landed = gcs.create(info, utf8("retry " + refused), Storage.BlobTargetOption.generationMatch(generation));
                } catch (StorageException e) {
                    assertThat(e.getCode()).isEqualTo(429);
                    refused++;
                    Thread.sleep(100); // the retrying client's pace
                }
            }
            assertThat(Duration.ofNanos(System.nanoTime() - before)).as("time from the applied write to the next")
                    .isGreaterThanOrEqualTo(interval);
            assertThat(refused).as("writes refused within the interval").isPositive();
            assertThat(landed.getGeneration()).isGreaterThan(generation);
        }
    }

    @Test
    void aLostReplyFollowsARequestServedInFull() throws Exception {
        try (GcsTestServer server = GcsTestServer.start(0, Duration.ZERO); Storage gcs = client(server)) {
            server.createBucket(BUCKET);
            BlobId id = BlobId.of(BUCKET, "lost/a");
            server.loseReplies(Request.UPLOAD, BUCKET, "lost/a", 1, LostReply.SERVICE_UNAVAILABLE);
            assertThatThrownBy(() -> gcs.create(BlobInfo.newBuilder(id).build(), utf8("landed"),
                    Storage.BlobTargetOption.doesNotExist()))
                    .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(503));
            assertThat(gcs.readAllBytes(id)).as("the upload whose reply was lost").isEqualTo(utf8("landed"));

            server.loseReplies(Request.GET, BUCKET, "lost/a", 1, LostReply.SERVICE_UNAVAILABLE);
            assertThatThrownBy(() -> gcs.get(id))
                    .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(503));
            long generation = gcs.get(id).getGeneration(); // the fault is used up

            server.loseReplies(Request.DELETE, BUCKET, "lost/a", 1, LostReply.CONNECTION_CLOSED);
            assertThatThrownBy(() -> gcs.delete(id, Storage.BlobSourceOption.generationMatch(generation)))
                    .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCause()).isInstanceOf(IOException.class));
            assertThat(gcs.get(id)).as("the delete whose connection was dropped").isNull();
            assertThat(server.lostReplyCount()).isEqualTo(3);
        }
    }

    private static void assertRateLimited(Runnable write) {
        assertThatThrownBy(write::run).isInstanceOfSatisfying(StorageException.class, e -> {
            assertThat(e.getCode()).isEqualTo(429);
            assertThat(e.getReason()).isEqualTo("rateLimitExceeded");
        });
    }
}
