package dev.latchkey.example.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A crash of the Redis process (SIGKILL, then a restart on the same data) under a holder, on a
 * server of its own: with the append-only file fsynced before each reply, the lease and the fencing
 * counter survive; without it they are lost — a second holder at once and a fencing token handed out
 * again — which is why {@link RedisLockProvider} refuses such a server unless told otherwise.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RedisCrashTest {
    private static final Duration TTL = Duration.ofSeconds(3);
    /** Many times what a crash and restart take here (about a second). */
    private static final Duration SURVIVING_TTL = Duration.ofSeconds(30);
    /** Far longer than the crash and restart take on a loaded machine, for the held-through checks. */
    private static final Duration GENEROUS = Duration.ofSeconds(60);

    private Path server;
    private String uri;
    private final String key = "crash-" + UUID.randomUUID();

    @BeforeEach
    void startServer() throws Exception {
        server = RedisServer.startAnother();
        uri = RedisServer.uriOf(server);
    }

    @AfterEach
    void stopServer() {
        RedisServer.stop(server);
    }

    @Test
    void withTheAppendOnlyFileALeaseAndItsTokenSurviveACrash() throws Exception {
        // a TTL far longer than the crash and restart take, so the heartbeat bridges the outage
        LeaseOptions options = LeaseOptions.ttl(SURVIVING_TTL);
        try (LockManager holder = Latchkey.open(uri); LockManager contender = Latchkey.open(uri)) {
            Lease first = holder.tryAcquire(key, options).orElseThrow();
            first.release();
            Lease lease = holder.tryAcquire(key, options).orElseThrow(); // heartbeat on
            long token = lease.fencingToken();
            assertThat(token).isGreaterThan(first.fencingToken());

            RedisServer.crashAndResume(server);

            // the record came back from the AOF: the holder is still the holder, to everyone
            LockInfo seen = soon(() -> contender.inspect(key)).orElseThrow(
                    () -> new AssertionError("the lock record was lost in the crash although the AOF was on"));
            assertThat(seen.leaseId()).isEqualTo(lease.leaseId());
            assertThat(soon(() -> contender.tryAcquire(key, options))).as("contender while the lease is held").isEmpty();
            soon(() -> {
                lease.renew();
                return true;
            });
            assertThat(lease.isValid()).as("the holder's lease after the crash").isTrue();
            lease.release();

            Lease next = contender.tryAcquire(key, options).orElseThrow();
            assertThat(next.fencingToken()).as("fencing token after the crash").isGreaterThan(token);
            next.release();
        }
    }

    /** The control: the same crash with the append-only file switched off loses the lease. */
    @Test
    void withoutTheAppendOnlyFileACrashLosesTheLeaseAndRepeatsTokens() throws Exception {
        configSet("appendonly", "no");
        assertThatThrownBy(() -> Latchkey.open(uri))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("has no append-only file (aof_enabled:0)")
                .hasMessageContaining("requireAof=false")
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse())
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(password()));

        String unchecked = uri + "?requireAof=false";
        try (LockManager holder = Latchkey.open(unchecked); LockManager contender = Latchkey.open(unchecked)) {
            Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(TTL)).orElseThrow();
            RedisServer.crashAndResume(server); // resumes with the old append-only file: our record is not in it
            // the record is gone, so the key is free; the new holder's token is the lost holder's again
            Lease second = takeSoon(contender);
            assertThat(second.fencingToken()).as("the token after the lost write (a repeat: the failure AOF prevents)")
                    .isEqualTo(lease.fencingToken());
        }
    }

    /**
     * The first answer of {@code call}, retrying the retriable errors a client reports while the
     * server restarts and it reconnects; fails after {@link #GENEROUS}.
     */
    private static <T> T soon(Supplier<T> call) throws InterruptedException {
        long until = System.nanoTime() + GENEROUS.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (LockBackendException e) {
                assertThat(e.isRetriable()).as("error while the server restarts: %s", e.getMessage()).isTrue();
                if (System.nanoTime() > until) throw new AssertionError("no answer within " + GENEROUS, e);
            }
            Thread.sleep(50);
        }
    }

    /** Polls until the contender holds the key. */
    private Lease takeSoon(LockManager contender) throws InterruptedException {
        long until = System.nanoTime() + GENEROUS.toNanos();
        while (System.nanoTime() < until) {
            Optional<Lease> taken = soon(() -> contender.tryAcquire(key, LeaseOptions.ttl(TTL)));
            if (taken.isPresent()) return taken.get();
            Thread.sleep(50);
        }
        throw new AssertionError("the contender did not get " + key + " within " + GENEROUS);
    }

    private void configSet(String name, String value) {
        RedisClient client = RedisClient.create(RedisURI.create(uri));
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            c.sync().configSet(name, value);
        } finally {
            client.shutdown();
        }
    }

    private String password() {
        return uri.substring(uri.indexOf(":", 8) + 1, uri.indexOf('@'));
    }
}
