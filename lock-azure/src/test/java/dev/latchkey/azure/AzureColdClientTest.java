package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.azure.RequestTap.Fault;
import dev.latchkey.azure.RequestTap.Try;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A fresh manager whose first request is answered later than the call timeout, as a cold JVM's is:
 * its first SDK call also starts the SDK, which under load took longer than 5 s while the server
 * answered in milliseconds. Here Azurite's reply to the manager's first request, whatever it is, is
 * held back past the timeout ({@link RequestTap}): the first lock call still gets the key within its
 * own bound, in both modes, because that first request is the warm-up read at open.
 */
class AzureColdClientTest {
    private static final Duration TTL = Duration.ofSeconds(15);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** Later than the call timeout, well inside the warm-up's bound. */
    private static final Duration FIRST_REPLY = TIMEOUT.plusSeconds(1);

    private final String key = "cold-" + UUID.randomUUID();

    private static String uri(String mode) {
        return Azurite.uri(mode) + "&timeout=" + TIMEOUT.toSeconds() + "s&maxAttempts=2";
    }

    @Test
    void leaseModeGetsTheKeyAtTheFirstAcquisitionOfAManagerWhoseFirstReplyIsLate() {
        held(uri("lease")); // the blob exists: the lock call's first request is the acquisition
        RequestTap tap = new RequestTap().next(1, RequestTap.ANY, Fault.DELAY_REPLY, FIRST_REPLY);
        try (LockManager m = Azurite.open(uri("lease"), tap)) {
            Lease lease = m.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat())
                    .orElseThrow(() -> new AssertionError("no one else holds the key"));
            assertThat(tap.tries("acquire")).as("one acquisition, answered in its bound").extracting(Try::status)
                    .containsExactly(201);
            lease.release();
        }
        held(uri("lease")); // no phantom holder: the key is free at once
    }

    @Test
    void etagModeGetsTheKeyAtTheFirstAcquisitionOfAManagerWhoseFirstReplyIsLate() {
        held(uri("etag")); // the blob exists: the lock call's first request reads it
        RequestTap tap = new RequestTap().next(1, RequestTap.ANY, Fault.DELAY_REPLY, FIRST_REPLY);
        try (LockManager m = Azurite.open(uri("etag"), tap)) {
            m.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat())
                    .orElseThrow(() -> new AssertionError("no one else holds the key")).release();
        }
        held(uri("etag"));
    }

    /** Takes the key at once as a client without faults, and gives it back. */
    private void held(String uri) {
        try (LockManager other = Latchkey.open(uri)) {
            assertThat(other.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat())).as("the key is free")
                    .isPresent().get().satisfies(Lease::release);
        }
    }
}
