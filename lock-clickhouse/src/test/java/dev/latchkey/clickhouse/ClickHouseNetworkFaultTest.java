package dev.latchkey.clickhouse;

import static dev.latchkey.tck.FaultProxy.Direction.CLIENT_TO_SERVER;
import static dev.latchkey.tck.FaultProxy.Direction.SERVER_TO_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.FaultProxy;
import dev.latchkey.tck.SlowReplyCheck;
import dev.latchkey.tck.TakeoverWatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Network faults between a lock client and the real ClickHouse server, put there by a
 * {@link FaultProxy} (the client's URI names the proxy's {@code host:port}, so its URL and
 * {@code Host} header are the proxy's; ClickHouse does not check them), while contenders talk to
 * the server directly. On a server of its own: resets and held requests never reach the shared one.
 *
 * <p>What is checked: a renewal that gets no answer ends well inside the safety margin of the
 * default TTL; a partition under a holder makes its lease invalid, and fires its listeners, before
 * anyone else holds; a candidate whose insert landed but whose reply (or settle read) was lost
 * leaves no phantom holder for its TTL; a latency spike past the margin never lets two hold; a
 * heartbeat whose reply was lost counts for nothing, the next one from its own send time; a reply
 * later than the request timeout frees nothing under a valid lease (the kit's check); and after
 * every fault heals the same manager works again.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ClickHouseNetworkFaultTest {
    /** Far above anything a healthy call here needs. */
    private static final Duration GENEROUS = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(50);
    /** Long enough that only a withdrawal, never the TTL, can free the key within {@link #FREE_WITHIN}. */
    private static final LeaseOptions LONG_LEASE = LeaseOptions.ttl(Duration.ofMinutes(2)).withOwner("long-lease");
    private static final Duration FREE_WITHIN = Duration.ofSeconds(20);

    @RegisterExtension
    static final ClickHouseTestServer.PrivateServer server = new ClickHouseTestServer.PrivateServer();

    private final List<AutoCloseable> opened = Collections.synchronizedList(new ArrayList<>());
    private final String table = "faults_" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
    }

    // ---------------------------------------------------------------- item: timeouts inside the margin

    /**
     * Defaults only (TTL 60 s, margin 12 s, no {@code timeout=} in the URI): a renewal against a
     * server that stopped answering fails within the margin, with the lease still valid, so another
     * attempt fits before its deadline. With a 30 s request timeout it would hang past the margin.
     */
    @Test
    void renewalThatGetsNoAnswerEndsWellInsideTheDefaultMarginAndTheManagerRecovers() throws Exception {
        FaultProxy proxy = proxy();
        LockManager m = open(proxy.rewrite(uri("settle=100ms")));
        Lease lease = m.tryAcquire("no-answer", LeaseOptions.defaults().withoutHeartbeat().withOwner("holder")).orElseThrow();
        Duration margin = LeaseOptions.DEFAULT_TTL.dividedBy(5);

        proxy.blackhole();
        long start = System.nanoTime();
        assertThatThrownBy(lease::renew).as("renewal through a partition")
                .isInstanceOfSatisfying(LockBackendException.class, e -> {
                    assertThat(e.isRetriable()).as("retriable: %s", e.getMessage()).isTrue();
                    assertThat(e.getMessage()).contains(proxy.host() + ":" + proxy.port());
                });
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).as("one renewal attempt against a server that does not answer (margin %s)", margin)
                .isLessThan(margin);
        assertThat(lease.isValid()).as("the lease after one failed attempt: its deadline is far").isTrue();

        proxy.heal();
        lease.renew();
        assertThat(lease.isValid()).isTrue();
        assertSameManagerWorks(m, "no-answer-after");
        lease.release();
    }

    /**
     * A heartbeat of a 5 s lease waits 0.5 s for its reply, but its release waits {@code timeout}:
     * a server that answers each request 1.4 s late (0.7 s each way) still gets the key released,
     * not a failed release and a key blocked until the TTL. Nothing waits on a released lease.
     */
    @Test
    void releaseOfAShortLeaseWaitsForASlowServerPastATenthOfItsTtl() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = open(proxy.rewrite(uri("settle=100ms&timeout=5s")));
        LockManager contender = open(uri("settle=100ms"));
        Duration ttl = Duration.ofSeconds(5);
        Lease lease = holder.tryAcquire("slow-release", LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner("holder")).orElseThrow();

        proxy.latency(ttl.dividedBy(10).plus(Duration.ofMillis(200)));
        lease.release();
        assertThat(contender.inspect("slow-release")).as("the key after a release answered late").isEmpty();
        assertThat(contender.tryAcquire("slow-release", LONG_LEASE)).as("a contender right after the release").isPresent()
                .get().satisfies(Lease::release);
        proxy.heal();
    }

    // ---------------------------------------------------------------- partitions

    @Test
    void partitionUnderAHolderEndsItsLeaseBeforeAnyoneElseHolds() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = open(proxy.rewrite(uri("settle=100ms&timeout=1s")));
        LockManager contender = open(uri("settle=100ms"));
        Duration ttl = Duration.ofSeconds(5);
        Lease lease = holder.tryAcquire("partitioned", LeaseOptions.ttl(ttl).withOwner("holder")).orElseThrow(); // heartbeat on
        AtomicReference<LeaseLostException> cause = new AtomicReference<>();
        AtomicLong lostAt = new AtomicLong();
        lease.onLost(e -> {
            lostAt.set(System.nanoTime());
            cause.set(e);
        });

        proxy.blackhole();
        long partitioned = System.nanoTime();
        TakeoverWatch takeover = TakeoverWatch.start(contender, "partitioned", lease, LONG_LEASE, POLL);
        Lease taken = takeover.await(ttl.multipliedBy(4).plus(GENEROUS));
        takeover.assertExclusion();
        System.out.println("fault-table: ClickHouseNetworkFaultTest | partition under the holder | invalid "
                + TimeUnit.NANOSECONDS.toMillis(lostAt.get() - partitioned) + " ms after the fault (TTL " + ttl.toMillis() + " ms)");
        assertThat(cause.get().reason()).as("why the partitioned holder lost its lease").isEqualTo(Reason.STORE_UNREACHABLE);

        proxy.heal();
        taken.release();
        assertSameManagerWorks(holder, "partitioned");
    }

    /**
     * Replies stop right after the round's insert was sent: the candidate lands, its reply never
     * comes, and the acquire fails. The withdrawal in the background gets its tombstone through the
     * requests that still flow, so a direct contender holds long before the candidate's 2-minute TTL
     * — while replies are still held. (Without it the candidate is a phantom holder for its TTL.)
     */
    @Test
    void insertWhoseReplyNeverComesLeavesNoPhantomHolder() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = open(proxy.rewrite(uri("settle=300ms&timeout=1s")));
        LockManager contender = open(uri("settle=100ms"));
        String key = "insert-reply-lost";

        // Each chunk 200 ms late: the insert's reply waits that long in the proxy after the insert
        // reached the server, and a stall holds what the proxy already has, so the switch wins.
        proxy.latency(Duration.ofMillis(200));
        Thread staller = stallRepliesOnceTheNextRequestIsSent(proxy);
        assertThatThrownBy(() -> holder.tryAcquire(key, LONG_LEASE)).as("acquire whose insert reply never came")
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("insert candidate failed");
        staller.join(GENEROUS.toMillis());
        assertThat(liveCandidateRowsEverWritten(key)).as("rows of the candidate that landed on the server").isPositive();

        pollUntilAcquired(contender, key, "after an insert whose reply never came").release();
        proxy.heal();
        assertSameManagerWorks(holder, key);
    }

    /**
     * The partition starts during the settle window, after the candidate landed: the settle read
     * gets no answer, and neither does the withdrawal. The partition ends with every connection
     * reset, as long partitions do, so nothing held back is delivered later: only a withdrawal
     * retried after the heal frees the key before the candidate's 2-minute TTL.
     */
    @Test
    void settleReadThatFailsLeavesNoPhantomHolder() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = open(proxy.rewrite(uri("settle=1s&timeout=1s")));
        LockManager contender = open(uri("settle=100ms"));
        String key = "settle-read-lost";

        CompletableFuture<Optional<Lease>> acquiring = CompletableFuture.supplyAsync(() -> holder.tryAcquire(key, LONG_LEASE));
        awaitCandidateOnTheServer(key);
        proxy.blackhole(); // within the 1 s settle window
        assertThatThrownBy(() -> acquiring.get(GENEROUS.toSeconds(), TimeUnit.SECONDS)).as("acquire whose settle read got no answer")
                .hasCauseInstanceOf(LockBackendException.class)
                .hasMessageContaining("read lock rows failed");
        assertThat(contender.tryAcquire(key, LONG_LEASE)).as("the key during the partition: the candidate holds it").isEmpty();

        proxy.resetAll();
        proxy.heal();
        pollUntilAcquired(contender, key, "after a settle read that failed").release();
        assertSameManagerWorks(holder, key);
    }

    /**
     * Every chunk 1.5 s late, past the 1 s margin of a 5 s lease: renewals time out or land too late
     * to count, the lease ends, and the direct contender gets in only after that.
     */
    @Test
    void latencySpikePastTheMarginNeverLetsTwoHold() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = open(proxy.rewrite(uri("settle=100ms&timeout=2s")));
        LockManager contender = open(uri("settle=100ms"));
        Duration ttl = Duration.ofSeconds(5);
        Lease lease = holder.tryAcquire("slow-network", LeaseOptions.ttl(ttl).withOwner("holder")).orElseThrow(); // heartbeat on

        proxy.latency(ttl.dividedBy(5).multipliedBy(3).dividedBy(2));
        TakeoverWatch takeover = TakeoverWatch.start(contender, "slow-network", lease, LONG_LEASE, POLL);
        Lease taken = takeover.await(ttl.multipliedBy(4).plus(GENEROUS));
        takeover.assertExclusion();

        proxy.heal();
        taken.release();
        assertSameManagerWorks(holder, "slow-network");
    }

    /**
     * The kit's slow-reply check ({@link SlowReplyCheck}): replies held past the 1 s request timeout,
     * well inside a 5 s TTL, while a direct contender polls: it never holds under a valid lease.
     */
    @Test
    void replySlowerThanTheRequestTimeoutNeverFreesTheKeyUnderAValidLease() throws Exception {
        FaultProxy proxy = proxy();
        LockManager holder = open(proxy.rewrite(uri("settle=100ms&timeout=1s")));
        SlowReplyCheck.run(holder, proxy, open(uri("settle=100ms")), "slow-reply", Duration.ofSeconds(5), Duration.ofSeconds(1),
                "ClickHouseNetworkFaultTest");
    }

    // ---------------------------------------------------------------- heartbeat under a lost reply

    /**
     * Two 6 s leases (deadline 4.8 s after the acquire was sent), no automatic heartbeat. Both get a
     * renewal that lands while its reply is held. The first is never renewed again: it must end by
     * its acquisition's deadline, not by one counted from the lost renewal. The second is renewed
     * once more after the heal: its validity counts from that renewal's own send time.
     */
    @Test
    void heartbeatWhoseReplyIsLostCountsForNothingAndTheNextCountsFromItsOwnSend() throws Exception {
        FaultProxy proxy = proxy();
        LockManager m = open(proxy.rewrite(uri("settle=100ms&timeout=1s")));
        Duration ttl = Duration.ofSeconds(6);
        Duration validity = ttl.minus(ttl.dividedBy(5));
        LeaseOptions o = LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner("holder");
        long acquiring = System.nanoTime();
        Lease unrenewed = m.tryAcquire("lost-reply-then-nothing", o).orElseThrow();
        Lease renewed = m.tryAcquire("lost-reply-then-renewed", o).orElseThrow();
        AtomicLong unrenewedLost = lostAt(unrenewed);
        AtomicLong renewedLost = lostAt(renewed);
        pace(acquiring, validity.multipliedBy(2).dividedBy(5)); // late enough that a deadline counted from it stands out

        proxy.stall(SERVER_TO_CLIENT);
        long lostRenewalSent = System.nanoTime();
        assertThatThrownBy(unrenewed::renew).as("renewal whose reply is held").isInstanceOf(LockBackendException.class);
        assertThatThrownBy(renewed::renew).as("renewal whose reply is held").isInstanceOf(LockBackendException.class);
        awaitNewestRevision(unrenewed, 2);
        awaitNewestRevision(renewed, 2);
        proxy.heal();

        long renewalSent = System.nanoTime();
        renewed.renew();
        awaitLoss(unrenewedLost, ttl);
        awaitLoss(renewedLost, ttl);
        assertThat(Duration.ofNanos(unrenewedLost.get() - lostRenewalSent))
                .as("loss of the lease whose last renewal's reply was lost, after that renewal was sent (a deadline counted"
                        + " from it would be %s)", validity)
                .isLessThan(validity);
        assertThat(Duration.ofNanos(renewedLost.get() - renewalSent))
                .as("loss of the lease renewed after the lost reply, after that renewal was sent")
                .isGreaterThanOrEqualTo(validity);
    }

    // ---------------------------------------------------------------- helpers

    private String uri(String params) {
        return server.uri() + "?table=" + table + (params.isEmpty() ? "" : "&" + params);
    }

    private FaultProxy proxy() {
        LockUri target = LockUri.parse(server.uri());
        FaultProxy proxy = FaultProxy.start(target.host(), target.port().getAsInt());
        opened.add(proxy);
        return proxy;
    }

    private LockManager open(String uri) {
        LockManager m = Latchkey.open(uri);
        opened.add(m);
        return m;
    }

    private String sql(String statement) {
        return ClickHouseTestServer.sql(server.uri(), statement);
    }

    private String qualified() {
        return "`" + LockUri.parse(server.uri()).path().substring(1) + "`.`" + table + "`";
    }

    private static String quoted(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    /** Candidate rows (not tombstones) ever written for {@code key}, read directly on the server. */
    private long liveCandidateRowsEverWritten(String key) {
        return Long.parseLong(sql("SELECT count() FROM " + qualified() + " WHERE state_id = " + quoted(key) + " AND released = 0"));
    }

    private void awaitCandidateOnTheServer(String key) throws InterruptedException {
        long start = System.nanoTime();
        while (liveCandidateRowsEverWritten(key) == 0) {
            if (System.nanoTime() - start > GENEROUS.toNanos()) fail("no candidate of " + key + " reached the server");
            Thread.sleep(10);
        }
    }

    /** Waits until the server's newest version of the lease's row has {@code revision}: the held renewal landed. */
    private void awaitNewestRevision(Lease lease, int revision) throws InterruptedException {
        long start = System.nanoTime();
        String query = "SELECT max(revision) FROM " + qualified() + " WHERE lock_id = " + quoted(lease.leaseId());
        while (!sql(query).equals(String.valueOf(revision))) {
            if (System.nanoTime() - start > GENEROUS.toNanos()) {
                fail("the renewal of " + lease + " never landed on the server (newest revision " + sql(query) + ")");
            }
            Thread.sleep(10);
        }
    }

    /**
     * Stalls the server's replies once the next request has reached the server: in an acquire
     * round, the conditional candidate insert, its first statement. Its reply is held if the stall
     * comes before the proxy forwards it (the caller adds latency for that).
     */
    private static Thread stallRepliesOnceTheNextRequestIsSent(FaultProxy proxy) {
        long requestBytes = proxy.forwardedBytes(CLIENT_TO_SERVER);
        Thread t = new Thread(() -> {
            while (proxy.forwardedBytes(CLIENT_TO_SERVER) == requestBytes) LockSupport.parkNanos(20_000);
            proxy.stall(SERVER_TO_CLIENT);
        }, "stall-replies-after-next-request");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static Lease pollUntilAcquired(LockManager m, String key, String when) throws InterruptedException {
        long start = System.nanoTime();
        while (System.nanoTime() - start < FREE_WITHIN.toNanos()) {
            Optional<Lease> l = m.tryAcquire(key, LONG_LEASE);
            if (l.isPresent()) return l.get();
            Thread.sleep(POLL.toMillis());
        }
        return fail("phantom holder " + when + ": " + key + " was still held " + FREE_WITHIN.toSeconds()
                + " s later (the candidate's TTL is " + LONG_LEASE.ttl().toSeconds() + " s): " + m.inspect(key));
    }

    /** After a fault healed: the same manager acquires, renews and releases again. */
    private static void assertSameManagerWorks(LockManager m, String key) throws InterruptedException {
        long start = System.nanoTime();
        while (true) {
            try {
                Lease l = m.acquire(key + "/healed", GENEROUS, LeaseOptions.ttl(Duration.ofSeconds(30)).withOwner("healed"));
                l.renew();
                assertThat(l.isValid()).isTrue();
                l.release();
                return;
            } catch (LockBackendException e) {
                // the first request after a heal may still meet a connection the fault broke
                if (System.nanoTime() - start > GENEROUS.toNanos()) throw e;
                Thread.sleep(POLL.toMillis());
            }
        }
    }

    private static AtomicLong lostAt(Lease lease) {
        AtomicLong at = new AtomicLong();
        lease.onLost(e -> at.set(System.nanoTime()));
        return at;
    }

    private static void awaitLoss(AtomicLong lostAt, Duration ttl) throws InterruptedException {
        long start = System.nanoTime();
        while (lostAt.get() == 0) {
            if (System.nanoTime() - start > ttl.plus(GENEROUS).toNanos()) fail("the lease's loss listener never fired");
            Thread.sleep(10);
        }
    }

    private static void pace(long startNanos, Duration offset) throws InterruptedException {
        long left = startNanos + offset.toNanos() - System.nanoTime();
        if (left > 0) TimeUnit.NANOSECONDS.sleep(left);
    }
}
