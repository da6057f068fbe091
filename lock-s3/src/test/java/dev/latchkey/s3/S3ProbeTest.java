package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import org.junit.jupiter.api.Test;

/**
 * The probe an {@code s3://} manager makes on open ({@link S3StoreProbe}): it passes on the real test
 * server, races included, at the cost it states and leaves nothing a lock listing shows, and it refuses s3rver
 * ({@code scripts/s3rver.sh}), which answers 200 to a second {@code If-None-Match: *} create, unless
 * {@code probe=false}.
 */
class S3ProbeTest {
    @Test
    void theTestServerPassesAtItsStatedCostAndLearnsItsIfMatchForm() {
        try (S3ConditionalStore store = S3Server.newStore(S3Server.uri())) {
            S3StoreProbe.Result r = S3StoreProbe.run(store);
            System.out.printf("probe of %s: %d requests, %d ms%n", store.where(), r.requests(), r.took().toMillis());
            // sequential steps, the race of creates, the races of replaces, the race object's tombstone and delete
            int requests = 7 + S3StoreProbe.RACERS + S3StoreProbe.RACES * S3StoreProbe.RACERS + 2;
            if (S3Server.onRgw()) {
                // one more for the unquoted If-Match, and a read-back after each racing loser's 500
                assertThat(r.requests()).as("requests of one probe").isBetween(requests + 1,
                        requests + 1 + S3StoreProbe.RACES * (S3StoreProbe.RACERS - 1));
            } else {
                assertThat(r.requests()).as("requests of one probe").isEqualTo(requests);
            }
            assertThat(store.ifMatchQuoted()).as("If-Match form learned (RGW: unquoted)")
                    .contains(!S3Server.onRgw());
            assertThat(store.list("")).as("records listed after the probe").noneMatch(n -> n.contains("probe"));
        }
    }

    @Test
    void s3rverIsRefusedNamingTheStoreAndWhatItIgnored() {
        String uri = ExternalServer.uri("LATCHKEY_TEST_S3RVER_URI", "s3rver");
        String endpoint = LockUri.parse(uri).param("endpoint").orElseThrow();
        for (String attempt : new String[] {"first", "second"}) {
            assertThatThrownBy(() -> Latchkey.open(uri).close())
                    .as("%s open on s3rver", attempt)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(endpoint)
                    .hasMessageContaining("ignores If-None-Match")
                    .hasMessageContaining("probe=false")
                    .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
        }
    }

    @Test
    void probeFalseOpensOnAStoreThatWouldFailIt() {
        String uri = withParam(ExternalServer.uri("LATCHKEY_TEST_S3RVER_URI", "s3rver"), "probe", "false");
        try (LockManager m = Latchkey.open(uri)) {
            m.tryAcquire("unprobed").orElseThrow().release();
        }
    }
}
