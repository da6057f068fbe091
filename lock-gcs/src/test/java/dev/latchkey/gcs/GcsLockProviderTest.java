package dev.latchkey.gcs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.Storage;
import dev.latchkey.Capability;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.gcs.testserver.GcsTestServer;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.StoredRecord;
import dev.latchkey.tck.ServerAgeProbe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code gs://} provider on its own test server: URI handling, where records live and what
 * they hold, versions and server-clock age, and clear errors for a missing bucket.
 */
class GcsLockProviderTest {
    private static GcsTestServer server;
    private static Storage raw;

    @BeforeAll
    static void start() {
        server = GcsTestServer.start();
        server.createBucket("provider-test");
        raw = GcsFixture.rawClient(server.endpoint());
    }

    @AfterAll
    static void stop() throws Exception {
        raw.close();
        server.close();
    }

    private static String uri(String bucketAndPrefix) {
        return "gs://" + bucketAndPrefix + "?endpoint=" + server.endpoint() + "&project=test&timeout=5s";
    }

    @Test
    void recordsAreObjectsUnderThePrefixNamedByTheEncodedKey() {
        String key = "Jobs/Nightly ü ../x";
        try (LockManager m = Latchkey.open(uri("provider-test/team/locks/"))) {
            assertThat(m.capabilities()).contains(Capability.FENCING_TOKENS, Capability.LIST,
                    Capability.SERVER_SIDE_EXPIRY, Capability.CONDITIONAL_STORE);
            assertThat(m.description()).contains("gs://provider-test/team/locks/").contains(server.endpoint());
            try (Lease lease = m.tryAcquire(key).orElseThrow()) {
                assertThat(m.tryAcquire(key)).isEmpty();
                String object = "team/locks/" + LockNames.encode(key) + ".lock";
                Blob blob = raw.get(BlobId.of("provider-test", object));
                assertThat(blob).as(object).isNotNull();
                assertThat(new String(raw.readAllBytes(blob.getBlobId()), StandardCharsets.UTF_8))
                        .startsWith("latchkey-lease 1\n").contains("state=HELD");
                assertThat(m.inspect(key)).map(LockInfo::leaseId).contains(lease.leaseId());
            }
            assertThat(m.inspect(key)).isEmpty();
        }
    }

    @Test
    void listSeesOnlyLockRecordsUnderThePrefix() {
        raw.create(com.google.cloud.storage.BlobInfo.newBuilder("provider-test", "listing/readme.txt").build(),
                "not a lock".getBytes(StandardCharsets.UTF_8));
        try (LockManager m = Latchkey.open(uri("provider-test/listing"))) {
            List<Lease> leases = new ArrayList<>();
            for (String key : List.of("a1", "a2", "b1")) leases.add(m.tryAcquire(key).orElseThrow());
            List<String> keys = new ArrayList<>();
            m.list("a").forEach(i -> keys.add(i.key()));
            assertThat(keys).containsExactly("a1", "a2");
            assertThat(m.list("")).hasSize(3);
            leases.forEach(Lease::release);
            assertThat(m.list("")).isEmpty();
        }
    }

    @Test
    void versionsAreGenerationsAndAgeComesFromTheServer() {
        try (GcsConditionalStore store = GcsStoreFactory.store(dev.latchkey.spi.LockUri.parse(uri("provider-test/cas")))) {
            String v1 = store.create("n", bytes("one")).orElseThrow();
            assertThat(store.create("n", bytes("two"))).isEmpty();
            StoredRecord r = store.read("n").orElseThrow();
            assertThat(r.version()).isEqualTo(v1);
            assertThat(r.data()).isEqualTo(bytes("one"));
            assertThat(Long.parseLong(v1)).isEqualTo(raw.get(BlobId.of("provider-test", "cas/n.lock")).getGeneration());

            String v2 = store.replace("n", v1, bytes("two")).orElseThrow();
            assertThat(Long.parseLong(v2)).isGreaterThan(Long.parseLong(v1));
            assertThat(store.replace("n", v1, bytes("three"))).isEmpty();
            assertThat(store.delete("n", v1)).isFalse();
            assertThat(store.delete("n", v2)).isTrue();
            assertThat(store.read("n")).isEmpty();
            assertThat(store.delete("n", v2)).isFalse();
            assertThat(store.replace("n", v2, bytes("four"))).isEmpty();
            // a re-created record never repeats an old version
            assertThat(Long.parseLong(store.create("n", bytes("five")).orElseThrow())).isGreaterThan(Long.parseLong(v2));
        }
    }

    @Test
    void serverAgeNeverOverstatesTheTrueAgeAndLagsItByLessThanTwoSeconds() throws Exception {
        try (GcsConditionalStore store = GcsStoreFactory.store(dev.latchkey.spi.LockUri.parse(uri("provider-test/ages")))) {
            ServerAgeProbe.assertAgesNeverOverstated(store, "age", Duration.ofSeconds(2));
        }
    }

    @Test
    void recordsTravelInMetadataAndLargeOnesInTheBodyOnly() {
        try (GcsConditionalStore store = GcsStoreFactory.store(dev.latchkey.spi.LockUri.parse(uri("provider-test/sizes")))) {
            byte[] small = bytes("small record");
            byte[] large = new byte[8 * 1024];
            new java.util.Random(7).nextBytes(large);
            store.create("small", small).orElseThrow();
            String v = store.create("large", large).orElseThrow();

            Blob smallBlob = raw.get(BlobId.of("provider-test", "sizes/small.lock"));
            assertThat(smallBlob.getMetadata()).containsKey(GcsConditionalStore.RECORD_METADATA);
            assertThat(raw.readAllBytes(smallBlob.getBlobId())).isEqualTo(small);
            Blob largeBlob = raw.get(BlobId.of("provider-test", "sizes/large.lock"));
            assertThat(largeBlob.getMetadata() == null ? java.util.Map.of() : largeBlob.getMetadata())
                    .doesNotContainKey(GcsConditionalStore.RECORD_METADATA);

            assertThat(store.read("small").orElseThrow().data()).isEqualTo(small);
            StoredRecord read = store.read("large").orElseThrow();
            assertThat(read.data()).isEqualTo(large);
            assertThat(read.version()).isEqualTo(v);
        }
    }

    /** Found by the probe when the manager opens; without the probe, by the first request. */
    @Test
    void missingBucketIsAClearNonRetriableError() {
        assertMissingBucket(() -> Latchkey.open(uri("no-such-bucket/locks")));
        try (LockManager m = Latchkey.open(uri("no-such-bucket/locks") + "&probe=false")) {
            assertMissingBucket(() -> m.tryAcquire("k"));
        }
    }

    private static void assertMissingBucket(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(LockBackendException.class, e -> {
            assertThat(e.isRetriable()).isFalse();
            assertThat(e.getMessage()).contains("no-such-bucket").contains("bucket not found").contains(server.endpoint());
        });
    }

    /**
     * On a server of its own: the shared one may still see background reads of other tests' managers
     * (the engine withdraws a claim that failed, e.g. on the missing bucket, for up to 30 s).
     */
    @Test
    void badUrisAreRejectedBeforeAnyRequest() {
        try (GcsTestServer quiet = GcsTestServer.start()) {
            String at = "?endpoint=" + quiet.endpoint() + "&project=test";
            assertThatThrownBy(() -> Latchkey.open("gs:///locks" + at))
                    .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("bucket");
            assertThatThrownBy(() -> Latchkey.open("gs://b/p" + at + "&tll=5s"))
                    .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("tll");
            assertThatThrownBy(() -> Latchkey.open("gs://b/p?endpoint=localhost:4443"))
                    .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("endpoint");
            assertThatThrownBy(() -> Latchkey.open("gs://b/p" + at + "&timeout=0s"))
                    .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("timeout");
            assertThat(quiet.requestCount()).isZero();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
