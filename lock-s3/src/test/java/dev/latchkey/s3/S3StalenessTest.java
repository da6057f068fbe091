package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockNames;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How an S3 lock decides that a holder is gone, against the real test server: on a custom endpoint
 * (the default there is {@code staleness=observed}) no wall clock is trusted, so a {@code Date} that
 * runs ahead of {@code Last-Modified} — two nodes, two clocks — never lets a contender take a live
 * lease, and an abandoned key is taken only by a contender that watched it unchanged for a full TTL;
 * {@code staleness=server} (the default on AWS S3 itself) trusts the server's clock and takes an
 * abandoned key on first sight.
 */
class S3StalenessTest {
    private final String uri = S3Server.uri();
    private final String tag = "st" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void aServerDateAheadOfItsLastModifiedLetsNoOneTakeALiveLeaseByDefault() throws Exception {
        // every reply through the front carries a Date an hour ahead: a node whose clock runs fast
        // answers reads of objects that another node stamped
        try (S3HttpFront front = S3HttpFront.before(uri).shiftDate(Duration.ofHours(1));
             LockManager holder = Latchkey.open(uri);
             LockManager contender = Latchkey.open(front.uri())) {
            String k = tag + "-skewed";
            Lease lease = holder.tryAcquire(k, longLease("holder")).orElseThrow();

            assertThat(contender.tryAcquire(k, longLease("contender")))
                    .as("a contender reading Date an hour past Last-Modified, default staleness on a custom endpoint")
                    .isEmpty();
            assertThat(lease.isValid()).isTrue();

            // what the default guards against: staleness=server believes the skewed clock
            try (LockManager trusting = Latchkey.open(withParam(front.uri(), "staleness", "server"))) {
                Optional<Lease> stolen = trusting.tryAcquire(k, longLease("trusting"));
                assertThat(stolen).as("staleness=server reading a Date an hour ahead takes the live lease").isPresent();
                stolen.get().release();
            }
        }
    }

    @Test
    void anAbandonedKeyIsTakenOnlyByAContenderThatWatchedItForATtl() throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        String watched = tag + "-abandoned";
        String onFirstSight = tag + "-abandoned-server";
        try (LockManager crashed = Latchkey.open(uri)) {
            // never released nor renewed: the holder's process is gone
            crashed.tryAcquire(watched, LeaseOptions.ttl(ttl).withoutHeartbeat()).orElseThrow();
            crashed.tryAcquire(onFirstSight, LeaseOptions.ttl(ttl).withoutHeartbeat()).orElseThrow();
            long abandoned = System.nanoTime();
            awaitServerAgeOf(onFirstSight, ttl); // written last: both records are stale by the server's clock now

            try (LockManager fresh = Latchkey.open(uri)) {
                assertThat(fresh.tryAcquire(watched, longLease("fresh")))
                        .as("one try of a fresh process at a key abandoned %s ago (TTL %s), default staleness",
                                Duration.ofNanos(System.nanoTime() - abandoned), ttl)
                        .isEmpty();
            }
            try (LockManager trusting = Latchkey.open(withParam(uri, "staleness", "server"))) {
                Optional<Lease> taken = trusting.tryAcquire(onFirstSight, longLease("trusting"));
                assertThat(taken).as("one try of a fresh process with staleness=server, past the TTL by the server's clock")
                        .isPresent();
                taken.get().release();
            }
            try (LockManager watcher = Latchkey.open(uri)) {
                long firstLook = System.nanoTime();
                Lease lease = watcher.acquire(watched, Duration.ofSeconds(60), longLease("watcher"));
                assertThat(Duration.ofNanos(System.nanoTime() - firstLook))
                        .as("from the watcher's first look to its takeover, vs the holder's TTL")
                        .isGreaterThanOrEqualTo(ttl);
                lease.release();
            }
        }
    }

    /** Polls until the server's clock says record {@code key} is at least {@code age} old. */
    private void awaitServerAgeOf(String key, Duration age) throws InterruptedException {
        try (S3ConditionalStore server = S3Server.newStore(withParam(uri, "staleness", "server"))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (server.read(LockNames.encode(key)).orElseThrow().age().compareTo(age) < 0) {
                assertThat(System.nanoTime() - deadline).as("waiting for the server's age of %s to reach %s", key, age).isNegative();
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }

    private LeaseOptions longLease(String who) {
        return LeaseOptions.ttl(Duration.ofMinutes(2)).withoutHeartbeat().withOwner(tag + "-" + who);
    }
}
