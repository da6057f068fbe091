package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.s3.S3ConditionalStore.Staleness;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ServerAgeProbe;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;

/** What is particular to {@code s3://}: URI rules, object layout, staleness and server-clock age, error mapping. */
class S3BackendTest {
    private final String uri = S3Server.uri();
    private final LockUri parsed = LockUri.parse(uri);
    private final String secret = parsed.param("secretAccessKey").orElseThrow();
    private final String tag = "t" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void badUrisAreRefusedNamingThePartWithoutTheSecret() {
        String creds = "accessKeyId=AKIA123&secretAccessKey=hush-hush";
        assertThatThrownBy(() -> Latchkey.open("s3:///locks?" + creds))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("bucket")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hush-hush"));
        assertThatThrownBy(() -> Latchkey.open("s3://b/locks?ttl=5s&" + creds))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("ttl")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hush-hush"));
        assertThatThrownBy(() -> Latchkey.open("s3://b/locks?region=us-east-1&secretAccessKey=hush-hush"))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("accessKeyId")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hush-hush"));
        assertThatThrownBy(() -> Latchkey.open("s3://b/locks?region=us-east-1&maxAttempts=0&" + creds))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("maxAttempts");
    }

    @Test
    void descriptionMasksTheSecret() {
        try (LockManager m = Latchkey.open(uri)) {
            assertThat(m.description()).contains(parsed.host()).doesNotContain(secret);
        }
    }

    @Test
    void everyKeyBecomesOneObjectUnderThePrefixAndRoundTrips() {
        String prefix = "layout-" + tag + "/inner";
        String scoped = "s3://" + parsed.host() + "/" + prefix + "?" + uri.substring(uri.indexOf('?') + 1);
        List<String> keys = List.of(tag + "/a/../../b", tag + "%2F..%2F", tag + " spaced ", tag + "-ключ-🔒",
                tag + "UPPER.lock", tag + "\\back");
        try (LockManager m = Latchkey.open(scoped)) {
            List<Lease> leases = new ArrayList<>();
            for (String k : keys) leases.add(m.tryAcquire(k).orElseThrow());
            assertThat(m.list(tag)).extracting(LockInfo::key).containsExactlyInAnyOrderElementsOf(keys);

            List<String> objects = new ArrayList<>();
            List<String> probe = new ArrayList<>();
            try (S3Client raw = S3Server.rawClient(uri)) {
                for (S3Object o : raw.listObjectsV2Paginator(b -> b.bucket(parsed.host())).contents()) {
                    if (!o.key().contains(tag)) continue;
                    (o.key().startsWith(prefix + "/.latchkey-probe/") ? probe : objects).add(o.key());
                }
            }
            // besides the locks, only the probe's record of its passed race (its own objects it deletes)
            assertThat(probe).containsExactly(prefix + "/.latchkey-probe/race-passed-v1");
            assertThat(objects).hasSize(keys.size())
                    .allSatisfy(k -> assertThat(k).matches(prefix + "/([a-z0-9_-]|~[0-9A-F]{2})+\\.lock"));
            for (Lease l : leases) l.release();
        }
    }

    @Test
    void serverAgeNeverOverstatesTheTrueAgeAndLagsItByLessThanTwoSeconds() throws Exception {
        try (S3ConditionalStore store = S3Server.newStore(withParam(uri, "staleness", "server"))) {
            assertThat(store.objectKey(tag)).isEqualTo("locks/" + tag + ".lock");
            ServerAgeProbe.assertAgesNeverOverstated(store, tag + "-age", Duration.ofSeconds(2));
        }
    }

    @Test
    void stalenessIsServerOnAwsAndObservedOnAnyOtherEndpointUnlessChosen() {
        String aws = "s3://b/locks?region=us-east-1&accessKeyId=AKIA123&secretAccessKey=hush-hush";
        assertThat(stalenessOf(aws)).isEqualTo(Staleness.SERVER);
        assertThat(stalenessOf(aws + "&staleness=observed")).isEqualTo(Staleness.OBSERVED);
        assertThat(stalenessOf(uri)).as("a custom endpoint").isEqualTo(Staleness.OBSERVED);
        assertThat(stalenessOf(withParam(uri, "staleness", "server"))).isEqualTo(Staleness.SERVER);
        try (LockManager onAws = Latchkey.open(aws); LockManager elsewhere = Latchkey.open(uri)) {
            assertThat(onAws.capabilities()).contains(Capability.SERVER_SIDE_EXPIRY);
            assertThat(elsewhere.capabilities()).doesNotContain(Capability.SERVER_SIDE_EXPIRY);
        }
        try (S3ConditionalStore observed = S3Server.newStore(uri)) {
            String name = tag + "-observed";
            observed.create(name, "x".getBytes(StandardCharsets.UTF_8)).orElseThrow();
            assertThat(observed.read(name).orElseThrow().age()).as("age with staleness=observed: not read from any clock").isNull();
        }
        assertThatThrownBy(() -> Latchkey.open(aws + "&staleness=local"))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("staleness")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hush-hush"));
    }

    private static Staleness stalenessOf(String uri) {
        try (S3ConditionalStore store = S3Server.newStore(uri)) {
            return store.staleness();
        }
    }

    @Test
    void missingBucketIsAPermanentErrorNamingIt() {
        String other = uri.replaceFirst("^s3://[^/]+/", "s3://no-such-bucket-" + tag + "/");
        try (LockManager m = Latchkey.open(other)) {
            assertThatThrownBy(() -> m.tryAcquire("k"))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> {
                        assertThat(e.isRetriable()).isFalse();
                        assertThat(e.getMessage()).contains("no-such-bucket-" + tag).doesNotContain(secret);
                    });
        }
    }

    @Test
    void unreachableEndpointIsARetriableErrorNamingIt() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        String dead = uri.replaceFirst("endpoint=[^&]+", "endpoint=http://127.0.0.1:" + port);
        try (LockManager m = Latchkey.open(dead)) {
            assertThatThrownBy(() -> m.tryAcquire("k"))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> {
                        assertThat(e.isRetriable()).isTrue();
                        assertThat(e.getMessage()).contains("127.0.0.1:" + port).doesNotContain(secret);
                    });
        }
    }
}
