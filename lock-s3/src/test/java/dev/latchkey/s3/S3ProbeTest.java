package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The probe an {@code s3://} manager makes on open ({@link S3StoreProbe}): it passes on the real test
 * server at the cost it states (racing on a prefix without a fresh marker of a passed race, reading
 * the marker only on one with it) and leaves nothing a lock listing shows, and it refuses s3rver
 * ({@code scripts/s3rver.sh}), which answers 200 to a second {@code If-None-Match: *} create, unless
 * {@code probe=false}.
 */
class S3ProbeTest {
    @Test
    void theFirstProbeOfAPrefixRacesAndMarksItsPassAndTheNextOnlyReadsTheMarker() {
        String uri = freshPrefix(S3Server.uri());
        try (S3ConditionalStore first = S3Server.newStore(uri); S3ConditionalStore second = S3Server.newStore(uri)) {
            S3StoreProbe.Result r = S3StoreProbe.run(first);
            System.out.printf("first probe of %s: %d requests, %d ms%n", first.where(), r.requests(), r.took().toMillis());
            assertThat(r.raced()).as("first probe of a fresh prefix raced").isTrue();
            assertRacingCost(r, 1);
            assertThat(first.ifMatchQuoted()).as("If-Match form learned (RGW: unquoted)").contains(!S3Server.onRgw());
            assertThat(first.readAt(first.probeKey(S3StoreProbe.MARKER))).as("marker after a passed race").isPresent();

            // a separate process's manager: it learns the If-Match form again, and races no more
            S3StoreProbe.Result later = S3StoreProbe.run(second);
            System.out.printf("later probe of %s: %d requests, %d ms%n", second.where(), later.requests(),
                    later.took().toMillis());
            assertThat(later.raced()).as("probe with a fresh marker raced").isFalse();
            assertThat(later.requests()).as("requests of a probe with a fresh marker: the sequential steps and the marker's GET")
                    .isEqualTo(S3Server.onRgw() ? 9 : 8);
            assertThat(second.list("")).as("records listed after the probes").isEmpty();
        }
    }

    @Test
    void anExpiredMarkerMakesTheRaceRunAgainAndIsReplaced() {
        try (S3ConditionalStore store = S3Server.newStore(freshPrefix(S3Server.uri()))) {
            String marker = store.probeKey(S3StoreProbe.MARKER);
            assertThat(S3StoreProbe.run(store).raced()).as("first probe raced").isTrue();
            String written = store.readAt(marker).orElseThrow().version();
            // a validity of zero: every marker, this one included, is expired
            S3StoreProbe.Result r = S3StoreProbe.run(store, S3StoreProbe.RACES, Duration.ZERO);
            assertThat(r.raced()).as("probe with an expired marker raced").isTrue();
            assertRacingCost(r, 0); // the If-Match form is known now; the marker is replaced, not created
            assertThat(store.readAt(marker).orElseThrow().version()).as("marker's version after the second pass")
                    .isNotEqualTo(written);
            assertThat(S3StoreProbe.run(store).raced()).as("probe after the renewed marker raced").isFalse();
        }
    }

    /**
     * A probe that raced: the sequential steps, the marker's GET, the race of creates, the races of
     * replaces, the race object's tombstone and delete, the marker's PUT; on RGW {@code learning}
     * more for the unquoted If-Match, and a read-back after each racing loser's 500.
     */
    private static void assertRacingCost(S3StoreProbe.Result r, int learning) {
        int requests = 7 + 1 + S3StoreProbe.RACERS + S3StoreProbe.RACES * S3StoreProbe.RACERS + 2 + 1;
        if (S3Server.onRgw()) {
            assertThat(r.requests()).as("requests of a racing probe").isBetween(requests + learning,
                    requests + learning + S3StoreProbe.RACES * (S3StoreProbe.RACERS - 1));
        } else {
            assertThat(r.requests()).as("requests of a racing probe").isEqualTo(requests);
        }
    }

    /** {@code uri} with a prefix of its own under its own, so that no other test's probe has marked it. */
    private static String freshPrefix(String uri) {
        int query = uri.indexOf('?');
        return uri.substring(0, query) + "/probe-" + UUID.randomUUID() + uri.substring(query);
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
