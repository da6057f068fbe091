package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.azure.RequestTap.Fault;
import dev.latchkey.azure.RequestTap.Try;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code mode=lease} when requests land at Azurite but their replies are lost or late (a
 * {@link RequestTap} in the client's pipeline): no phantom holder keeps a key for a lease's
 * duration, a retried write of ours is recognised as ours, and every call ends in time.
 */
class AzureUnconfirmedRequestsTest {
    private static final Duration TTL = Duration.ofSeconds(15);
    /** A held-back reply times out quickly: one call, both its tries included, ends within 2 s. */
    private static final String FAST = "&timeout=2s&maxAttempts=2";

    private final String key = "unconfirmed-" + UUID.randomUUID();

    private static String uri(String extra) {
        return Azurite.uri("lease") + extra;
    }

    /** Waits for the key as a client without faults does; returns when it got it ({@link System#nanoTime()}). */
    private long acquiredByAnother() {
        try (LockManager other = Latchkey.open(uri(""))) {
            Lease next = other.acquire(key, TTL.multipliedBy(4), LeaseOptions.ttl(TTL).withoutHeartbeat());
            long at = System.nanoTime();
            next.release();
            return at;
        }
    }

    @Test
    void anAcquisitionWhoseReplyCameTooLateIsWithdrawnNotLeftHolding() {
        acquiredByAnother(); // the blob exists, so the first request of the attempt below is the acquisition
        RequestTap tap = new RequestTap().next(2, "acquire", Fault.DELAY_REPLY, Duration.ofSeconds(20));
        try (LockManager m = Azurite.open(uri(FAST), tap)) {
            assertThatThrownBy(() -> m.tryAcquire(key, LeaseOptions.ttl(TTL)))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> assertThat(e.isRetriable()).isTrue());
        }
        Try granted = tap.tries("acquire").get(0);
        assertThat(granted.status()).as("Azurite granted the lease whose reply the client never saw").isEqualTo(201);
        assertThat(Duration.ofNanos(acquiredByAnother() - granted.sentNanos()))
                .as("another client got the key before the unclaimed lease could have run out by itself")
                .isLessThan(TTL);
    }

    /**
     * Every try of an acquisition proposes our lease id, and Azure grants an active lease again to its
     * own id: the SDK's retry after our grant's reply was lost is granted too, not refused (409) as if
     * someone else held the key, which would leave our unseen grant a phantom holder.
     */
    @Test
    void anAcquisitionWhoseReplyWasLostIsGrantedToTheSdksRetry() {
        acquiredByAnother(); // the blob exists, so the first request of the attempt below is the acquisition
        RequestTap tap = new RequestTap().next(1, "acquire", Fault.LOSE_REPLY);
        try (LockManager m = Azurite.open(uri(FAST), tap)) {
            Lease lease = m.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat())
                    .orElseThrow(() -> new AssertionError("the SDK's retry of our own acquisition was refused"));
            assertThat(tap.tries("acquire")).as("our grant, its reply lost, then the SDK's retry")
                    .extracting(Try::status).containsExactly(201, 201);
            assertThat(m.inspect(key)).hasValueSatisfying(i -> assertThat(i.leaseId()).isEqualTo(lease.leaseId()));
            lease.release();
        }
        acquiredByAnother();
    }

    @Test
    void aClaimThatFailsIsGivenBackEvenWhenTheFirstReleaseIsLostToo() {
        RequestTap tap = new RequestTap()
                .next(2, "metadata", Fault.LOSE_REPLY)  // the holder record: both tries land, both replies lost
                .next(2, "release", Fault.DROP_REQUEST); // and the first release of the unclaimed lease never arrives
        try (LockManager m = Azurite.open(uri(FAST), tap)) {
            assertThatThrownBy(() -> m.tryAcquire(key, LeaseOptions.ttl(TTL)))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> assertThat(e.isRetriable()).isTrue());
            long sent = tap.lastLanded("acquire");
            assertThat(Duration.ofNanos(acquiredByAnother() - sent))
                    .as("another client got the key before the unclaimed lease could have run out by itself")
                    .isLessThan(TTL);
            assertThat(tap.tries("release")).as("the release was retried after the dropped ones").hasSizeGreaterThan(2);
        }
    }

    @Test
    void aHolderRecordWhoseReplyWasLostIsRecognisedAsOurs() {
        RequestTap tap = new RequestTap().next(1, "metadata", Fault.LOSE_REPLY);
        try (LockManager m = Azurite.open(uri(FAST), tap)) {
            Lease lease = m.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat())
                    .orElseThrow(() -> new AssertionError("the SDK's retry of our own holder record answered 412; "
                            + "that is not someone else holding the key"));
            assertThat(tap.tries("metadata")).extracting(Try::status).containsExactly(200, 412);
            assertThat(m.inspect(key)).hasValueSatisfying(i -> {
                assertThat(i.leaseId()).isEqualTo(lease.leaseId());
                assertThat(i.fencingToken()).isEqualTo(lease.fencingToken());
            });
            lease.release();
        }
    }

    @Test
    void aReleaseWhoseReplyWasLostIsNotReportedAsALoss() {
        RequestTap tap = new RequestTap();
        try (LockManager m = Azurite.open(uri(FAST), tap)) {
            Lease lease = m.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat()).orElseThrow();
            tap.next(1, "release", Fault.LOSE_REPLY);
            lease.close(); // the SDK's retry finds no lease of ours: that is our own release, not a loss
            assertThat(tap.tries("release")).extracting(Try::status).containsExactly(200, 409);
            assertThat(m.inspect(key)).isEmpty();
            try (LockManager other = Latchkey.open(uri(""))) {
                assertThat(other.tryAcquire(key, LeaseOptions.ttl(TTL))).as("the key is free at once").isPresent()
                        .get().satisfies(Lease::release);
            }
        }
    }

    /** Confirms (this held before too) that Azure's renewal is idempotent, so the SDK's retry is safe. */
    @Test
    void aRenewalWhoseReplyWasLostIsRetriedAndLands() {
        RequestTap tap = new RequestTap();
        try (LockManager m = Azurite.open(uri(FAST), tap)) {
            Lease lease = m.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat()).orElseThrow();
            tap.next(1, "renew", Fault.LOSE_REPLY);
            lease.renew();
            assertThat(tap.tries("renew")).extracting(Try::status).containsExactly(200, 200);
            assertThat(lease.isValid()).isTrue();
            lease.release();
        }
    }

    @Test
    void aRenewalThatHangsEndsWellInsideTheSafetyMargin() {
        RequestTap tap = new RequestTap();
        // the default timeouts; a 15 s lease has a 3 s margin
        try (LockManager m = Azurite.open(uri(""), tap)) {
            Lease lease = m.tryAcquire(key, LeaseOptions.ttl(TTL).withoutHeartbeat()).orElseThrow();
            tap.next(10, "renew", Fault.DELAY_REPLY, Duration.ofSeconds(60));
            long start = System.nanoTime();
            assertThatThrownBy(lease::renew)
                    .isInstanceOfSatisfying(LockBackendException.class, e -> assertThat(e.isRetriable()).isTrue());
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(took).as("a renewal that gets no reply ends within the margin (TTL/5), leaving the heartbeat time")
                    .isLessThan(TTL.dividedBy(5));
            tap.clear();
            lease.release();
        }
    }
}
