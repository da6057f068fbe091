package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;
import static dev.latchkey.s3.S3HttpFront.Kind.CONDITIONAL_WRITE;
import static dev.latchkey.s3.S3HttpFront.Kind.READ;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.StoredRecord;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the S3 store makes of each answer to a conditional write, through {@link S3HttpFront} in
 * front of the real test server: a refusal (409, 503 {@code SlowDown}, 429) is "not written" and
 * nothing changes in the store; any other server error is a retriable exception and is not retried
 * by the SDK (its outcome is unknown); a write that landed but was answered with an error is found
 * by the lease engine's read-back; and a server that never answers ends each call well inside the
 * 12 s margin of the default 60 s TTL.
 */
class S3WriteAnswersTest {
    /** TTL/5 of the default TTL: a call must end well inside it. */
    private static final Duration DEFAULT_MARGIN = LeaseOptions.DEFAULT_TTL.dividedBy(5);

    private final String uri = S3Server.uri();
    private final String tag = "w" + UUID.randomUUID().toString().substring(0, 8);

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"503, SlowDown", "409, ConditionalRequestConflict", "429, TooManyRequests"})
    void aRefusedConditionalWriteIsNotWrittenAfterOneSdkRetry(int status, String code) throws Exception {
        try (S3HttpFront front = S3HttpFront.before(uri); S3ConditionalStore store = S3Server.newStore(front.uri())) {
            String name = tag + "-refused-" + status;
            String v1 = store.create(name, bytes("one")).orElseThrow();

            front.refuse(CONDITIONAL_WRITE, 2, status, code);
            assertThat(store.replace(name, v1, bytes("two"))).as("replace refused with %s %s twice", status, code).isEmpty();
            assertThat(front.seen(CONDITIONAL_WRITE)).as("conditional writes seen: the create, then a refused replace and its one retry")
                    .isEqualTo(3);
            StoredRecord kept = store.read(name).orElseThrow();
            assertThat(kept.version()).as("version after the refused replace").isEqualTo(v1);
            assertThat(new String(kept.data(), UTF_8)).isEqualTo("one");

            front.refuse(CONDITIONAL_WRITE, 2, status, code);
            assertThat(store.create(name + "-new", bytes("x"))).as("create refused with %s %s twice", status, code).isEmpty();
            assertThat(store.read(name + "-new")).as("the record of the refused create").isEmpty();

            front.refuse(CONDITIONAL_WRITE, 1, status, code);
            assertThat(store.replace(name, v1, bytes("three"))).as("a replace whose retry got through").isPresent();
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"500, InternalError", "503, ServiceUnavailable", "502, BadGateway"})
    void anyOtherServerErrorOnAWriteIsARetriableExceptionTheSdkDoesNotRetry(int status, String code) throws Exception {
        try (S3HttpFront front = S3HttpFront.before(uri); S3ConditionalStore store = S3Server.newStore(front.uri())) {
            String name = tag + "-error-" + status;
            String v1 = store.create(name, bytes("one")).orElseThrow();

            front.refuse(CONDITIONAL_WRITE, 2, status, code);
            assertThatThrownBy(() -> store.replace(name, v1, bytes("two")))
                    .isInstanceOfSatisfying(LockBackendException.class, e -> {
                        assertThat(e.isRetriable()).as("retriable: %s", e.getMessage()).isTrue();
                        assertThat(e.getMessage()).contains("HTTP " + status).contains(code);
                    });
            assertThat(front.seen(CONDITIONAL_WRITE))
                    .as("conditional writes seen: the create and one replace (a retry of a write whose outcome is unknown could be "
                            + "refused while the first attempt may still land)")
                    .isEqualTo(2);
            assertThat(front.pending()).as("the second armed error, never used").isEqualTo(1);
        }
    }

    @Test
    void readsAreRetriedAfterAServerError() throws Exception {
        try (S3HttpFront front = S3HttpFront.before(uri); S3ConditionalStore store = S3Server.newStore(front.uri())) {
            String name = tag + "-read";
            store.create(name, bytes("one")).orElseThrow();
            front.refuse(READ, 1, 500, "InternalError");
            assertThat(store.read(name)).as("a read whose first attempt got a 500").isPresent();
            assertThat(front.seen(READ)).as("reads seen: the failed attempt and its retry").isEqualTo(2);
        }
    }

    @Test
    void aThrottledClaimIsNotAcquiredAndLeavesTheKeyFree() throws Exception {
        try (S3HttpFront front = S3HttpFront.before(uri); LockManager m = Latchkey.open(unprobed(front))) {
            String k = tag + "-throttled-claim";
            front.refuse(CONDITIONAL_WRITE, 2, 503, "SlowDown");
            assertThat(m.tryAcquire(k)).as("tryAcquire of a free key whose create was throttled").isEmpty();
            assertThat(m.inspect(k)).as("the key after the throttled claim").isEmpty();
            Lease lease = m.tryAcquire(k).orElseThrow();
            lease.release();
        }
    }

    @Test
    void aWriteThatLandedButWasAnsweredWithAnErrorIsFoundByTheReadBack() throws Exception {
        try (S3HttpFront front = S3HttpFront.before(uri);
             LockManager m = Latchkey.open(unprobed(front));
             LockManager other = Latchkey.open(uri)) {
            String k = tag + "-landed";
            front.failAfterLanding(CONDITIONAL_WRITE, 1, 500, "InternalError");
            Lease lease = m.tryAcquire(k, LeaseOptions.ttl(Duration.ofMinutes(2)).withoutHeartbeat()).orElseThrow();
            assertThat(lease.isValid()).isTrue();
            assertThat(other.inspect(k).map(LockInfo::leaseId)).as("the holder the store shows").contains(lease.leaseId());

            // a replace answered 500 reads the record back: its own bytes there, it landed
            front.failAfterLanding(CONDITIONAL_WRITE, 1, 500, "InternalError");
            int reads = front.seen(READ);
            lease.renew();
            assertThat(front.seen(READ)).as("reads after the renewal answered 500").isEqualTo(reads + 1);
            assertThat(lease.isValid()).isTrue();
            lease.renew(); // and the version it found is the one the next renewal expects
            assertThat(other.tryAcquire(k)).as("a contender while the lease is held").isEmpty();
            lease.release();
            assertThat(other.inspect(k)).as("the key after release").isEmpty();
        }
    }

    @Test
    void aServerThatNeverAnswersEndsEachCallWellInsideTheMargin() throws Exception {
        // accepts connections (and counts them), never reads nor answers a byte
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<Socket> accepted = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) accepted.add(silent.accept());
                } catch (IOException closed) {
                    // the test is over
                }
            }, "silent-s3");
            acceptor.setDaemon(true);
            acceptor.start();
            String dead = uri.replaceFirst("endpoint=[^&]+", "endpoint=http://127.0.0.1:" + silent.getLocalPort());
            try (S3ConditionalStore store = S3Server.newStore(dead)) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> store.create(tag + "-silent", bytes("x")))
                        .isInstanceOfSatisfying(LockBackendException.class, e -> assertThat(e.isRetriable()).isTrue());
                Duration write = Duration.ofNanos(System.nanoTime() - start);
                assertThat(accepted).as("connections for one conditional write: a timed-out attempt may still land, so no retry")
                        .hasSize(1);

                start = System.nanoTime();
                assertThatThrownBy(() -> store.read(tag + "-silent"))
                        .isInstanceOfSatisfying(LockBackendException.class, e -> assertThat(e.isRetriable()).isTrue());
                Duration read = Duration.ofNanos(System.nanoTime() - start);
                assertThat(accepted).as("connections after one read too: reads are retried once").hasSize(3);

                assertThat(write).as("a conditional write against a silent server, vs the default margin").isLessThan(DEFAULT_MARGIN);
                assertThat(read).as("a read with its retry against a silent server, vs the default margin").isLessThan(DEFAULT_MARGIN);
            } finally {
                for (Socket s : accepted) s.close();
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    /** The front's URI with {@code probe=false}: the faults armed here are for the lock's own writes. */
    private static String unprobed(S3HttpFront front) {
        return withParam(front.uri(), "probe", "false");
    }
}
