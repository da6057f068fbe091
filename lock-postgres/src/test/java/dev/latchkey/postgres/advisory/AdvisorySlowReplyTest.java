package dev.latchkey.postgres.advisory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * mode=advisory when the replies on a holder's pinned session come later than {@code timeout}: the
 * lock must stay with the holder for as long as its lease may be valid. The holder talks to the
 * server through a {@link FaultProxy} that holds the server's replies back while the holder's own
 * bytes (a close, too) still reach the server; a contender talks to the server directly. The driver
 * used to close the session when a renewal's reply was {@code timeout} late, and the server freed the
 * lock at once, while the holder's lease was valid for most of its TTL.
 */
class AdvisorySlowReplyTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    private final String tag = "slow-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closing = new ArrayList<>();

    private LockManager manager(String uri) {
        LockManager m = Latchkey.open(PgTestSupport.with(uri, "timeout=" + TIMEOUT.toMillis() + "ms"));
        closing.add(m);
        return m;
    }

    private FaultProxy proxy() {
        LockUri u = LockUri.parse(PgTestSupport.uri());
        FaultProxy p = FaultProxy.start(u.host(), u.port().orElse(5432));
        closing.add(0, p);
        return p;
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) c.close();
    }

    /**
     * A renewal whose reply is held for three timeouts, well inside the TTL: the contender waits all
     * that time in vain, and the renewal lands once the replies flow again — the lease stays valid.
     */
    @Test
    void aRenewalRepliedLaterThanTheTimeoutKeepsTheLock() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = manager(proxy.rewrite(PgTestSupport.uri()));
        LockManager contender = manager(PgTestSupport.uri());
        String key = tag + "/late";
        LeaseOptions options = LeaseOptions.ttl(Duration.ofSeconds(10)).withoutHeartbeat();
        Lease lease = holder.tryAcquire(key, options).orElseThrow();

        proxy.stall(FaultProxy.Direction.SERVER_TO_CLIENT);
        CompletableFuture<Void> renewal = CompletableFuture.runAsync(lease::renew);
        assertThatThrownBy(() -> contender.acquire(key, TIMEOUT.multipliedBy(3), options))
                .as("the contender, while the holder's renewal waits for its reply")
                .isExactlyInstanceOf(LockTimeoutException.class);
        assertThat(renewal).as("the renewal is still waiting for its reply").isNotDone();
        proxy.heal();

        renewal.get(30, TimeUnit.SECONDS);
        assertThat(lease.isValid()).isTrue();
        lease.renew();
        assertThat(contender.tryAcquire(key, options)).as("the key, after the late renewal landed").isEmpty();
        lease.release();
        contender.tryAcquire(key, options).orElseThrow().release();
    }

    /**
     * Replies that never come (until the test is over): the holder's heartbeat hangs, its lease runs
     * out on its own clock, and only then — a margin later, at the TTL — does the contender get the key.
     */
    @Test
    void repliesThatNeverComeFreeTheKeyOnlyAtTheTtl() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = manager(proxy.rewrite(PgTestSupport.uri()));
        LockManager contender = manager(PgTestSupport.uri());
        String key = tag + "/never";
        Duration ttl = Duration.ofSeconds(6);
        // warm-up: the holder's session is checked and set up for this TTL before its replies stop
        holder.tryAcquire(tag + "/warm-up", LeaseOptions.ttl(ttl)).orElseThrow().release();
        long beforeAcquire = System.nanoTime();
        Lease lease = holder.tryAcquire(key, LeaseOptions.ttl(ttl)).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        AtomicReference<LeaseLostException> lost = new AtomicReference<>();
        lease.onLost(e -> {
            lostAt.set(System.nanoTime());
            lost.set(e);
        });

        proxy.stall(FaultProxy.Direction.SERVER_TO_CLIENT); // every heartbeat from now on hangs
        Lease next = contender.acquire(key, Duration.ofSeconds(60), LeaseOptions.ttl(Duration.ofSeconds(60)));
        long grantedAt = System.nanoTime();

        // no renewal landed after the acquisition, whose request went out after beforeAcquire:
        // the lease was valid until at least beforeAcquire + TTL - TTL/5
        assertThat(Duration.ofNanos(grantedAt - beforeAcquire)).as("acquisition to the contender's grant")
                .isGreaterThanOrEqualTo(ttl);
        assertThat(lostAt.get()).as("the holder had been told of its loss").isNotZero();
        assertThat(grantedAt - lostAt.get()).as("before the contender got the key").isPositive();
        assertThat(lost.get().reason().ranOutLocally()).as("lost by running out: %s", lost.get()).isTrue();
        assertThat(lease.isValid()).isFalse();
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.release();
    }
}
