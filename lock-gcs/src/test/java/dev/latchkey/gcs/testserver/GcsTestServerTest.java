package dev.latchkey.gcs.testserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.NoCredentials;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.BucketInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageException;
import com.google.cloud.storage.StorageOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keeps the test server honest, through Google's own client and raw HTTP: preconditions are
 * atomic under concurrency (exactly one winner), generations only grow, errors have GCS's shape,
 * gzip bodies and the download endpoint work; the per-object write limit refuses what it must and
 * nothing more; a lost reply follows a request that was served in full.
 */
class GcsTestServerTest {
    private static final String BUCKET = "server-test";
    private static GcsTestServer server;
    private static Storage storage;

    /** Preconditions on their own: this server has no write limit (interval zero turns it off). */
    @BeforeAll
    static void start() {
        server = GcsTestServer.start(0, Duration.ZERO);
        storage = StorageOptions.http().setHost(server.endpoint()).setProjectId("test")
                .setCredentials(NoCredentials.getInstance()).build().getService();
        storage.create(BucketInfo.of(BUCKET));
    }

    @AfterAll
    static void stop() throws Exception {
        storage.close();
        server.close();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void bucketInsertConflictsAndGet() {
        assertThat(storage.get(BUCKET).getName()).isEqualTo(BUCKET);
        assertThat(storage.get("no-such-bucket")).isNull();
        assertThatThrownBy(() -> storage.create(BucketInfo.of(BUCKET)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    }

    @Test
    void objectLifecycleWithPreconditions() {
        BlobId id = BlobId.of(BUCKET, "dir/life.lock");
        BlobInfo info = BlobInfo.newBuilder(id).setContentType("text/plain").build();
        Blob first = storage.create(info, utf8("one"), Storage.BlobTargetOption.doesNotExist());
        assertThat(first.getGeneration()).isPositive();

        assertThatThrownBy(() -> storage.create(info, utf8("again"), Storage.BlobTargetOption.doesNotExist()))
                .isInstanceOfSatisfying(StorageException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(412);
                    assertThat(e.getReason()).isEqualTo("conditionNotMet");
                });

        Blob meta = storage.get(id);
        assertThat(meta.getGeneration()).isEqualTo(first.getGeneration());
        assertThat(meta.getUpdateTimeOffsetDateTime()).isNotNull();
        assertThat(storage.readAllBytes(id, Storage.BlobSourceOption.generationMatch(first.getGeneration())))
                .isEqualTo(utf8("one"));
        assertThatThrownBy(() -> storage.readAllBytes(id, Storage.BlobSourceOption.generationMatch(first.getGeneration() + 1)))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));

        Blob second = storage.create(info, utf8("two"), Storage.BlobTargetOption.generationMatch(first.getGeneration()));
        assertThat(second.getGeneration()).isGreaterThan(first.getGeneration());
        assertThatThrownBy(() -> storage.create(info, utf8("stale"), Storage.BlobTargetOption.generationMatch(first.getGeneration())))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));

        Blob patched = storage.update(second.toBuilder().setMetadata(Map.of("k", "v")).build(),
                Storage.BlobTargetOption.metagenerationMatch());
        assertThat(patched.getMetadata()).containsEntry("k", "v");
        assertThat(patched.getMetageneration()).isEqualTo(second.getMetageneration() + 1);
        assertThat(patched.getGeneration()).isEqualTo(second.getGeneration());
        assertThatThrownBy(() -> storage.update(second.toBuilder().setMetadata(Map.of("k", "w")).build(),
                Storage.BlobTargetOption.metagenerationMatch()))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));

        assertThatThrownBy(() -> storage.delete(id, Storage.BlobSourceOption.generationMatch(first.getGeneration())))
                .isInstanceOfSatisfying(StorageException.class, e -> assertThat(e.getCode()).isEqualTo(412));
        assertThat(storage.delete(id, Storage.BlobSourceOption.generationMatch(second.getGeneration()))).isTrue();
        assertThat(storage.delete(id)).isFalse();
        assertThat(storage.get(id)).isNull();

        // a generation is never reused, not even after a delete
        Blob third = storage.create(info, utf8("three"), Storage.BlobTargetOption.doesNotExist());
        assertThat(third.getGeneration()).isGreaterThan(second.getGeneration());
    }

    @Test
    void listFiltersByPrefixAndPages() {
        for (int i = 0; i < 25; i++) {
            storage.create(BlobInfo.newBuilder(BUCKET, String.format("list/a%02d", i)).build(), utf8("x"));
        }
        storage.create(BlobInfo.newBuilder(BUCKET, "list-other").build(), utf8("x"));
        List<String> names = new ArrayList<>();
        storage.list(BUCKET, Storage.BlobListOption.prefix("list/"), Storage.BlobListOption.pageSize(10))
                .iterateAll().forEach(b -> names.add(b.getName()));
        assertThat(names).hasSize(25).allMatch(n -> n.startsWith("list/a")).doesNotHaveDuplicates();
    }

    /** The property the lock rests on: racing writes on one generation, exactly one wins. */
    @Test
    void concurrentConditionalWritesHaveExactlyOneWinner() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 15; round++) {
                BlobId id = BlobId.of(BUCKET, "race/r" + round);
                BlobInfo info = BlobInfo.newBuilder(id).build();
                // racing creators
                assertThat(race(pool, threads, () -> storage.create(info, utf8("c"), Storage.BlobTargetOption.doesNotExist())))
                        .isEqualTo(1);
                long generation = storage.get(id).getGeneration();
                // racing replacers of one generation
                assertThat(race(pool, threads, () -> storage.create(info, utf8("r"),
                        Storage.BlobTargetOption.generationMatch(generation)))).isEqualTo(1);
                long next = storage.get(id).getGeneration();
                assertThat(next).isGreaterThan(generation);
                // racing deleters of one generation
                assertThat(race(pool, threads, () -> storage.delete(id, Storage.BlobSourceOption.generationMatch(next))
                        ? Boolean.TRUE : null)).isEqualTo(1);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Runs {@code n} copies of {@code write} at once; returns how many succeeded (the rest must get 412). */
    private static int race(ExecutorService pool, int n, Callable<Object> write) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Boolean>> results = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            results.add(pool.submit(() -> {
                go.await();
                try {
                    return write.call() != null;
                } catch (StorageException e) {
                    if (e.getCode() != 412) throw e;
                    return false;
                }
            }));
        }
        go.countDown();
        int wins = 0;
        for (Future<Boolean> f : results) {
            if (f.get()) wins++;
        }
        return wins;
    }

    @Test
    void clientDefaultGzipUploadRoundTrips() {
        BlobId id = BlobId.of(BUCKET, "gzip/client");
        byte[] data = utf8("compressible ".repeat(200));
        storage.create(BlobInfo.newBuilder(id).build(), data); // the client gzips by default
        assertThat(storage.readAllBytes(id)).isEqualTo(data);
    }

    @Test
    void rawGzipMediaUploadAndDownloadPathAndErrorShape() throws IOException {
        byte[] data = utf8("hello gzip");
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(data);
        }
        HttpURLConnection up = open("/upload/storage/v1/b/" + BUCKET + "/o?uploadType=media&name=raw%2Fg&ifGenerationMatch=0", "POST");
        up.setRequestProperty("Content-Encoding", "gzip");
        up.setRequestProperty("Content-Type", "application/octet-stream");
        up.setDoOutput(true);
        try (OutputStream o = up.getOutputStream()) {
            o.write(gz.toByteArray());
        }
        assertThat(up.getResponseCode()).isEqualTo(200);
        assertThat(up.getHeaderField("Date")).isNotBlank();
        String json = new String(up.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(json).contains("\"name\":\"raw/g\"").contains("\"size\":\"" + data.length + "\"");

        HttpURLConnection down = open("/download/storage/v1/b/" + BUCKET + "/o/raw%2Fg?alt=media", "GET");
        assertThat(down.getResponseCode()).isEqualTo(200);
        assertThat(down.getInputStream().readAllBytes()).isEqualTo(data);
        assertThat(down.getHeaderField("x-goog-generation")).matches("[0-9]+");

        HttpURLConnection missing = open("/storage/v1/b/" + BUCKET + "/o/raw%2Fnone", "GET");
        assertThat(missing.getResponseCode()).isEqualTo(404);
        assertThat(missing.getHeaderField("Date")).isNotBlank();
        String error = new String(missing.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(error).contains("\"code\":404").contains("\"reason\":\"notFound\"");
    }

    /**
     * A step of the server's clock, as a client sees it ({@code Date − updated} of one response): a
     * record written before a step forward of an hour looks an hour older, one written after it as
     * old as it is; back to true time, both as old as they are. On a server of its own.
     */
    @Test
    void clockStepAgesRecordsWrittenBeforeIt() throws IOException {
        try (GcsTestServer stepped = GcsTestServer.start(0, Duration.ZERO)) {
            stepped.createBucket(BUCKET);
            upload(stepped, "before");
            stepped.stepClock(Duration.ofHours(1));
            upload(stepped, "after");
            // Date has whole seconds (up to 1 s short); the upper bounds only allow for a slow machine
            assertThat(age(stepped, "before")).isBetween(Duration.ofMinutes(59).plusSeconds(59), Duration.ofMinutes(70));
            assertThat(age(stepped, "after")).isBetween(Duration.ofSeconds(-1), Duration.ofMinutes(10));
            stepped.stepClock(Duration.ZERO);
            assertThat(age(stepped, "before")).isBetween(Duration.ofSeconds(-1), Duration.ofMinutes(10));
            assertThat(age(stepped, "after")).isBetween(Duration.ofMinutes(-60).minusSeconds(1), Duration.ofMinutes(-50));
        }
    }

    private static void upload(GcsTestServer s, String name) throws IOException {
        HttpURLConnection up = open(s, "/upload/storage/v1/b/" + BUCKET + "/o?uploadType=media&name=clock%2F" + name, "POST");
        up.setDoOutput(true);
        try (OutputStream o = up.getOutputStream()) {
            o.write(utf8(name));
        }
        assertThat(up.getResponseCode()).isEqualTo(200);
    }

    /** The response's {@code Date} minus the object's {@code updated}, as the backend computes a record's age. */
    private static Duration age(GcsTestServer s, String name) throws IOException {
        HttpURLConnection get = open(s, "/storage/v1/b/" + BUCKET + "/o/clock%2F" + name, "GET");
        assertThat(get.getResponseCode()).isEqualTo(200);
        String json = new String(get.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Matcher updated = Pattern.compile("\"updated\":\"([^\"]+)\"").matcher(json);
        assertThat(updated.find()).as("updated in %s", json).isTrue();
        Instant date = ZonedDateTime.parse(get.getHeaderField("Date"), Http.HTTP_DATE).toInstant();
        return Duration.between(Instant.parse(updated.group(1)), date);
    }

    private static HttpURLConnection open(String pathAndQuery, String method) throws IOException {
        return open(server, pathAndQuery, method);
    }

    private static HttpURLConnection open(GcsTestServer s, String pathAndQuery, String method) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(s.endpoint() + pathAndQuery).toURL().openConnection();
        c.setRequestMethod(method);
        return c;
    }
}
