package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.GENEROUS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.InvalidLockKeyException;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a network backend does when the network between a holder and its server fails: a
 * {@link FaultProxy} is put between the holder's client and the real server, while its contender
 * talks to the server directly. A backend proves itself by subclassing this:
 * <pre>{@code
 * class MyNetworkFaultTest extends NetworkFaultContract {
 *     @Override protected String serverUri() { return myServerUri; }
 *     @Override protected InetSocketAddress server() { return new InetSocketAddress("127.0.0.1", port); }
 * }
 * }</pre>
 *
 * <p><b>What is checked</b>: a partition under a holder ends its lease — invalid, listeners fired —
 * before any other client holds, and the key is free again within the TTL plus a bound; a
 * partition that swallows the reply to an acquisition leaves no phantom holder past the TTL;
 * latency past the safety margin lets no two leases be valid at once; a reply slower than the
 * client's own request timeout ({@link #requestTimeout()}), well inside the TTL, frees nothing under
 * a valid lease ({@link SlowReplyCheck}); after the network heals, the
 * same clients work again without a restart, also after every connection was reset; invalid keys
 * send nothing; and, given {@link #serverFaults()}, a server restart lets no one in while a lease
 * granted before it could still be valid — and, for a store that declares it keeps its leases
 * through a restart ({@link ServerFaults#leasesSurviveRestart()}), the holder renews on the
 * restarted server and nobody else gets the key until it lets go. Each test prints one {@code fault-table:} line with the
 * time from fault to {@code isValid() == false} on the holder, for the README's table.
 *
 * <p>The proxy models an application-level partition: its kernel still answers TCP keepalives
 * (see {@link FaultProxy}), so what ends a partitioned session on the server here is the backend's
 * own protocol-level timeout.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
public abstract class NetworkFaultContract {
    private final TckFixture fx = new TckFixture();
    private FaultProxy proxy;

    /** The backend's URI as a client on this machine uses it, naming {@link #server()} as {@code host:port}. */
    protected abstract String serverUri() throws Exception;

    /** Where the server listens; the proxy forwards there. */
    protected abstract InetSocketAddress server() throws Exception;

    /** A manager for {@code uri} (the server's, or the proxy's). Default {@link Latchkey#open}. */
    protected LockManager open(String uri, LockContext context) throws Exception {
        return Latchkey.open(uri, context);
    }

    /**
     * TTL of the leases these tests put under faults. Default 3 s; it must be longer than one
     * request of the backend and allowed by it (Azure lease mode: 15 s and up).
     */
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    /**
     * The longest the client of {@link #serverUri()} waits for one reply; the slow-reply test holds
     * replies for longer. Default: the URI's {@code timeout} parameter; a backend configured otherwise
     * overrides this (the test fails, never skips, when neither says).
     */
    protected Duration requestTimeout() throws Exception {
        Duration timeout = LockUri.parse(serverUri()).durationParam("timeout", null);
        if (timeout == null) {
            throw new IllegalStateException("serverUri() has no timeout parameter: override requestTimeout() with the"
                    + " longest the backend's client waits for one reply");
        }
        return timeout;
    }

    /** Server-side faults the backend's tests can cause; null (the default) skips their tests. */
    protected ServerFaults serverFaults() {
        return null;
    }

    /** Faults only the backend's own test support can cause on its server. */
    public interface ServerFaults {
        /** Stops and starts the server (same address, same data), as a crash-free restart would. */
        void restart() throws Exception;

        /**
         * Whether a lease outlives {@link #restart()}: true for a store that keeps acknowledged writes
         * (Redis with an fsynced append-only file, a lease table), whose holder then renews on the
         * restarted server; false (the default) for a lock that ends with the server's session
         * (PostgreSQL advisory locks), whose holder must find it lost before anyone else gets in.
         */
        default boolean leasesSurviveRestart() {
            return false;
        }
    }

    @AfterEach
    void closeEverything() {
        try {
            if (proxy != null) proxy.heal();
            fx.closeAll();
        } finally {
            if (proxy != null) proxy.close();
        }
    }

    // ---------------------------------------------------------------- partitions

    @Test
    void partitionUnderAHolderEndsItsLeaseBeforeAnyoneElseHolds() throws Exception {
        Duration ttl = shortTtl();
        LockManager holder = throughProxy();
        String k = fx.key("partitioned-holder");
        Lease lease = fx.hold(holder, k, LeaseOptions.ttl(ttl).withOwner(fx.owner("holder"))); // heartbeat on
        TakeoverWatch contender = fx.watchTakeover(direct(), k, lease, longLease(), poll());
        AtomicLong invalidAt = invalidation(lease);

        long fault = System.nanoTime();
        proxy.blackhole();

        contender.await(ttl.multipliedBy(10).plus(GENEROUS));
        contender.assertExclusion();
        report("partition under the holder", fault, invalidAt);
    }

    @Test
    void lostReplyToAnAcquisitionLeavesNoPhantomHolderPastTheTtl() throws Exception {
        Duration ttl = shortTtl();
        LockManager holder = throughProxy();
        LockManager contender = direct();
        String k = fx.key("lost-acquire-reply");
        holder.inspect(fx.key("warm-up")); // connections and schema in place before the fault
        // requests arrive, replies never do: the claim lands on the server, the client times out
        proxy.stall(FaultProxy.Direction.SERVER_TO_CLIENT);
        long fault = System.nanoTime();
        try {
            fx.tryTake(holder, k, LeaseOptions.ttl(ttl).withOwner(fx.owner("unanswered")));
        } catch (LockException expected) {
            // the client gave up, as it must; what matters is what the server was left with
        }
        Lease next = fx.pollUntilAcquired(contender, k, longLease(), ttl.plus(GENEROUS), poll());
        assertThat(next.isValid()).isTrue();
        System.out.println("fault-table: " + backend() + " | reply lost during acquire | key free "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fault) + " ms after the fault (TTL " + ttl.toMillis() + " ms)");
    }

    @Test
    void latencyPastTheMarginNeverLetsTwoLeasesBeValid() throws Exception {
        Duration ttl = shortTtl();
        LockManager holder = throughProxy();
        String k = fx.key("slow-network");
        Lease lease = fx.hold(holder, k, LeaseOptions.ttl(ttl).withOwner(fx.owner("holder")));
        TakeoverWatch contender = fx.watchTakeover(direct(), k, lease, longLease(), poll());
        AtomicLong invalidAt = invalidation(lease);
        long fault = System.nanoTime();
        proxy.latency(ttl.dividedBy(2)); // each way: every renewal's round trip exceeds the TTL/5 margin

        // The slow renewals may still land and keep the server's hold alive; a contender is not
        // promised the key, but if it gets it, the holder must be invalid by then.
        Optional<Lease> taken = contender.awaitIfTaken(ttl.multipliedBy(4));
        if (taken.isPresent()) contender.assertExclusion();
        report("latency of TTL/2 each way", fault, invalidAt);
    }

    /** A reply slower than the client's request timeout, well inside the TTL: see {@link SlowReplyCheck}. */
    @Test
    void replySlowerThanTheRequestTimeoutNeverFreesTheKeyUnderAValidLease() throws Exception {
        LockManager holder = throughProxy();
        SlowReplyCheck.run(holder, proxy, direct(), fx.key("slow-reply"), shortTtl(), requestTimeout(), backend());
    }

    // ---------------------------------------------------------------- recovery

    @Test
    void serviceResumesAfterHealAndAfterEveryConnectionWasReset() throws Exception {
        LockManager m = throughProxy();
        fx.hold(m, fx.key("before"), longLease()).release();

        proxy.blackhole();
        assertThatThrownBy(() -> fx.tryTake(m, fx.key("during"), longLease()), "acquire while partitioned")
                .isInstanceOf(LockException.class);
        proxy.heal();
        retryUntilHeld(m, fx.key("after-heal")).release();

        proxy.resetAll();
        retryUntilHeld(m, fx.key("after-reset")).release();
    }

    // ---------------------------------------------------------------- keys

    @Test
    void invalidKeysSendNothingToTheServer() throws Exception {
        LockManager m = throughProxy();
        m.inspect(fx.key("warm-up"));
        long before = proxy.forwardedBytes(FaultProxy.Direction.CLIENT_TO_SERVER);
        for (String k : TckKeys.invalid()) {
            for (Runnable call : List.<Runnable>of(() -> m.tryAcquire(k), () -> m.acquire(k, Duration.ofMillis(100)),
                    () -> m.inspect(k), () -> m.forceRelease(k), () -> m.forceRelease(k, "some-lease"))) {
                assertThatThrownBy(call::run).isInstanceOf(InvalidLockKeyException.class);
            }
        }
        assertThat(proxy.forwardedBytes(FaultProxy.Direction.CLIENT_TO_SERVER) - before)
                .as("bytes sent to the server for invalid keys").isZero();
    }

    // ---------------------------------------------------------------- server faults

    @Test
    void serverRestartLetsNoOneInWhileALeaseGrantedBeforeItCouldBeValid() throws Exception {
        ServerFaults faults = serverFaults();
        Assumptions.assumeTrue(faults != null, "serverFaults() is null: the backend's tests cannot restart its server");
        if (faults.leasesSurviveRestart()) {
            leaseOutlivesARestart(faults);
            return;
        }
        Duration ttl = shortTtl();
        LockManager holder = direct();
        String k = fx.key("restart");
        Lease lease = fx.hold(holder, k, LeaseOptions.ttl(ttl).withOwner(fx.owner("holder")));
        AtomicLong invalidAt = invalidation(lease);
        long fault = System.nanoTime();
        faults.restart();
        TakeoverWatch contender = fx.watchTakeover(direct(), k, lease, longLease(), poll());
        contender.await(ttl.multipliedBy(10).plus(GENEROUS));
        contender.assertExclusion();
        report("server restart", fault, invalidAt);
    }

    /**
     * A store that keeps its leases through a restart: the holder (its TTL far longer than a restart
     * takes) renews on the restarted server, nobody else gets the key meanwhile, and it is free at
     * once when the holder releases it. No TTL is waited out.
     */
    private void leaseOutlivesARestart(ServerFaults faults) throws Exception {
        LockManager holder = direct();
        String k = fx.key("restart-kept");
        Lease lease = fx.hold(holder, k, LeaseOptions.ttl(GENEROUS).withOwner(fx.owner("holder")));
        faults.restart();
        renewOnceTheServerAnswers(lease);
        LockManager contender = direct(); // opened after the restart: its first request is not a reconnect
        assertThat(fx.tryTake(contender, k, longLease()))
                .as("a contender on %s after a restart of a store declaring that leases survive it", TckFixture.show(k))
                .isEmpty();
        assertThat(lease.isValid()).as("the holder's lease after the restart and a renewal").isTrue();
        lease.release();
        fx.pollUntilAcquired(contender, k, longLease(), GENEROUS, poll());
    }

    /** Renews {@code lease}, retrying while the restarted server cannot answer yet; a loss fails the test. */
    private static void renewOnceTheServerAnswers(Lease lease) throws InterruptedException {
        long start = System.nanoTime();
        while (true) {
            try {
                lease.renew();
                return;
            } catch (LeaseLostException e) {
                throw new AssertionError("the lease on " + TckFixture.show(lease.key()) + " was lost across a restart"
                        + " of a store declaring that leases survive it (ServerFaults.leasesSurviveRestart): " + e.getMessage(), e);
            } catch (LockBackendException e) {
                if (System.nanoTime() - start > GENEROUS.toNanos()) {
                    throw new AssertionError("the holder could not renew within " + GENEROUS.toSeconds()
                            + " s of the restart", e);
                }
                TckFixture.pace(Duration.ofMillis(100));
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    private LockManager throughProxy() throws Exception {
        if (proxy == null) {
            InetSocketAddress s = server();
            proxy = FaultProxy.start(s.getHostString(), s.getPort());
        }
        return fx.track(open(proxy.rewrite(serverUri()), LockContext.defaults()));
    }

    private LockManager direct() throws Exception {
        return fx.track(open(serverUri(), LockContext.defaults()));
    }

    private Lease retryUntilHeld(LockManager m, String k) throws InterruptedException {
        long start = System.nanoTime();
        while (true) {
            try {
                return fx.hold(m, k, longLease());
            } catch (LockException e) {
                if (System.nanoTime() - start > GENEROUS.toNanos()) {
                    throw new AssertionError("the client did not recover within " + GENEROUS.toSeconds() + " s", e);
                }
                TckFixture.pace(Duration.ofMillis(100));
            }
        }
    }

    private static AtomicLong invalidation(Lease lease) {
        AtomicLong at = new AtomicLong();
        lease.onLost(e -> at.set(System.nanoTime()));
        return at;
    }

    private void report(String fault, long faultNanos, AtomicLong invalidAt) throws Exception {
        long at = invalidAt.get();
        String time = at == 0 ? "holder still valid" : "invalid " + TimeUnit.NANOSECONDS.toMillis(at - faultNanos) + " ms after the fault";
        System.out.println("fault-table: " + backend() + " | " + fault + " | " + time + " (TTL " + shortTtl().toMillis() + " ms)");
    }

    /** The test class, e.g. {@code AzureNetworkFaultTest$LeaseMode}: names backend and configuration, never a secret. */
    private String backend() {
        String name = getClass().getName();
        return name.substring(name.lastIndexOf('.') + 1);
    }

    private LeaseOptions longLease() {
        return LeaseOptions.ttl(Duration.ofMinutes(2).compareTo(shortTtl().multipliedBy(4)) > 0
                ? shortTtl().multipliedBy(4) : Duration.ofMinutes(2)).withOwner(fx.owner("contender"));
    }

    private Duration poll() {
        return Duration.ofMillis(Math.max(20, shortTtl().toMillis() / 50));
    }
}
