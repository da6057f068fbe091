package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The requests a {@code mode=lease} acquire+release sends to Azurite, counted by a
 * {@link RequestTap} in the client's pipeline (it sees every try): re-taking a key this manager
 * released skips the properties read, and only while no one else wrote the blob since.
 */
class AzureLeaseRequestsTest {
    private static final LeaseOptions OPTIONS = LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat(); // renew and release get 6 s each

    /** Counting, not timing: a loaded machine may be slow, so each call gets a generous bound. */
    private static final String URI = Azurite.uri("lease") + "&timeout=30s";

    private final String key = "requests-" + UUID.randomUUID();

    @Test
    void reTakingAKeyThisManagerReleasedSkipsTheRead() {
        RequestTap tap = new RequestTap();
        try (LockManager m = Azurite.open(URI, tap)) {
            int from = tap.count();
            long first = takeAndRelease(m);
            assertThat(tap.opsSince(from)).as("first sight: the blob is created, its properties read")
                    .containsExactly("acquire", "put", "acquire", "head", "metadata", "renew", "release");

            from = tap.count();
            long again = takeAndRelease(m);
            assertThat(tap.opsSince(from)).as("re-take of the key this manager released")
                    .containsExactly("acquire", "metadata", "renew", "release");
            assertThat(again).as("token of the re-take").isEqualTo(first + 1);
        }
    }

    @Test
    void aReTakeAfterAnotherHolderReadsAndFencesAboveIt() {
        RequestTap tap = new RequestTap();
        try (LockManager m = Azurite.open(URI, tap);
             LockManager other = Azurite.open(URI)) {
            long first = takeAndRelease(m);
            long between = takeAndRelease(other);
            int from = tap.count();
            long again = takeAndRelease(m);
            assertThat(tap.opsSince(from)).as("re-take after another manager held the key: what we remember is stale")
                    .containsExactly("acquire", "head", "metadata", "renew", "release");
            assertThat(between).isGreaterThan(first);
            assertThat(again).as("token after the other holder's").isGreaterThan(between);
        }
    }

    private long takeAndRelease(LockManager m) {
        Lease lease = m.tryAcquire(key, OPTIONS).orElseThrow(() -> new AssertionError("the free key was refused"));
        long token = lease.fencingToken();
        lease.release();
        return token;
    }
}
