package dev.latchkey.tck;

import static dev.latchkey.tck.FaultInjectingStore.Fault.FAIL_BEFORE;
import static dev.latchkey.tck.FaultInjectingStore.Fault.LOSE_REPLY;
import static dev.latchkey.tck.FaultInjectingStore.Fault.REFUSE;
import static dev.latchkey.tck.FaultInjectingStore.Fault.RETRIED_AFTER_LANDING;
import static dev.latchkey.tck.FaultInjectingStore.Op.CREATE;
import static dev.latchkey.tck.FaultInjectingStore.Op.READ;
import static dev.latchkey.tck.FaultInjectingStore.Op.REPLACE;
import static dev.latchkey.tck.TckFixture.GENEROUS;
import static dev.latchkey.tck.TckFixture.pace;
import static dev.latchkey.tck.TckFixture.paceUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.InvalidLockKeyException;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Mutual exclusion, token order and liveness of the lease engine over a backend's own
 * {@link ConditionalStore} when the store (or the network to it) misbehaves: the faults of
 * {@link FaultInjectingStore} put between a holder and the store, with a contender on a clean
 * client of the same store. A store proves itself by subclassing this and implementing
 * {@link #newStore()} — an independent client on the same backing store each time:
 * <pre>{@code
 * class MyStoreFaultTest extends StoreFaultContract {
 *     @Override protected ConditionalStore newStore() { return MyProvider.openStore(uri); }
 * }
 * }</pre>
 *
 * <p><b>What is checked</b>, each through the fault that broke a real lock: a renewal whose reply
 * was lost, and a renewal the store refused without writing, never make the lease outlive the
 * store's expiry; a renewal whose SDK retry found its own first attempt keeps the lease; a claim
 * whose reply was lost (with or without the read-back failing) leaves no phantom holder for a TTL;
 * a claim slower than the lease's validity window is never handed out; a release that fails stops
 * the renewals, so the key frees; a renewal that hangs delays neither any lease's loss signal nor
 * another manager's renewals; invalid keys cost no request; and contention through random faults
 * keeps critical sections apart with increasing tokens. "Exclusion" is judged as
 * {@link Lease#isValid()} defines it: when the contender gets in, the old holder is invalid and
 * its loss listener has fired.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
public abstract class StoreFaultContract {
    private final TckFixture fx = new TckFixture();
    private final List<ConditionalStore> stores = new CopyOnWriteArrayList<>();
    private Duration shortTtl;

    /** A fresh, independent client of the store under test; closed after the test. */
    protected abstract ConditionalStore newStore() throws Exception;

    /**
     * A manager over {@code store} as the backend builds one. Default: a plain {@link ConditionalStoreLockManager};
     * override if the backend's provider adds capabilities or settings.
     */
    protected LockManager newManager(ConditionalStore store, LockContext context) {
        return new ConditionalStoreLockManager(store, context, Set.of());
    }

    /**
     * TTL of the leases these tests let run out. Default 2 s, or three times the store's
     * {@linkplain ConditionalStore#minWriteInterval() minimum write interval} if that is longer.
     */
    protected Duration shortTtl() throws Exception {
        if (shortTtl == null) {
            Duration byStore = store().minWriteInterval().multipliedBy(3);
            shortTtl = byStore.compareTo(Duration.ofSeconds(2)) > 0 ? byStore : Duration.ofSeconds(2);
        }
        return shortTtl;
    }

    /** Rounds per thread of the random-fault contention test (4 managers × 2 threads). Default 8. */
    protected int chaosRounds() {
        return 8;
    }

    @AfterEach
    void closeEverything() {
        try {
            fx.closeAll();
        } finally {
            // stores given to a manager were closed with it; closing twice must be harmless
            for (ConditionalStore s : stores) {
                try {
                    s.close();
                } catch (RuntimeException e) {
                    // already closed
                }
            }
            stores.clear();
        }
    }

    // ---------------------------------------------------------------- renewals

    @Test
    void renewalWhoseReplyWasLostNeverOutlivesTheStoresExpiry() throws Exception {
        Duration ttl = shortTtl();
        FaultInjectingStore holderStore = faulty();
        LockManager holder = manager(holderStore);
        String k = fx.key("lost-renewal-reply");
        Lease lease = fx.hold(holder, k, unrenewed(ttl));
        TakeoverWatch contender = fx.watchTakeover(manager(store()), k, lease, longLease(), poll(ttl));

        // The first renewal lands but its reply is lost; the second, half a TTL later, finds the
        // store holding the first: validity may count from the first's send time, not the second's.
        holderStore.arm(REPLACE, LOSE_REPLY);
        long firstRenewal = System.nanoTime();
        renewIgnoringStoreErrors(lease);
        paceUntil(firstRenewal, ttl.dividedBy(2));
        renewIgnoringStoreErrors(lease);

        contender.await(takeoverLimit(ttl));
        contender.assertExclusion();
        assertThat(holderStore.injected(REPLACE)).as("the lost reply was injected").isEqualTo(1);
    }

    @Test
    void renewalTheStoreRefusedWithoutWritingExtendsNothing() throws Exception {
        Duration ttl = shortTtl();
        FaultInjectingStore holderStore = faulty();
        LockManager holder = manager(holderStore);
        String k = fx.key("refused-renewal");
        long acquired = System.nanoTime();
        Lease lease = fx.hold(holder, k, unrenewed(ttl));
        TakeoverWatch contender = fx.watchTakeover(manager(store()), k, lease, longLease(), poll(ttl));

        paceUntil(acquired, ttl.dividedBy(2));
        holderStore.arm(REPLACE, REFUSE); // "conflict" or "slow down": nothing written
        renewIgnoringStoreErrors(lease);

        contender.await(takeoverLimit(ttl));
        contender.assertExclusion();
    }

    @Test
    void renewalWhoseRetryFoundItsOwnFirstAttemptKeepsTheLease() throws Exception {
        Duration ttl = shortTtl();
        FaultInjectingStore holderStore = faulty();
        LockManager holder = manager(holderStore);
        LockManager contender = manager(store());
        String k = fx.key("retried-renewal");
        Lease lease = fx.hold(holder, k, unrenewed(ttl));

        holderStore.arm(REPLACE, RETRIED_AFTER_LANDING);
        lease.renew(); // landed: a renewal, not a loss and not an error

        assertThat(lease.isValid()).as("lease after a renewal whose retry found it landed").isTrue();
        assertThat(fx.tryTake(contender, k, longLease())).as("contender after that renewal").isEmpty();
        lease.release();
        assertThat(fx.tryTake(contender, k, longLease())).as("contender after release").isPresent();
    }

    // ---------------------------------------------------------------- claims

    @Test
    void claimWhoseReplyWasLostLeavesNoPhantomHolder() throws Exception {
        FaultInjectingStore holderStore = faulty();
        LockManager holder = manager(holderStore);
        LockManager contender = manager(store());

        String fresh = fx.key("lost-create-reply");
        holderStore.arm(CREATE, LOSE_REPLY);
        claimThenLetGo(holder, fresh);
        assertFreeLongBeforeTheTtl(contender, fresh, "after a create whose reply was lost");

        String used = fx.key("lost-replace-reply");
        fx.hold(holder, used, longLease()).release(); // the next claim is a replace of the released record
        holderStore.arm(REPLACE, LOSE_REPLY);
        claimThenLetGo(holder, used);
        assertFreeLongBeforeTheTtl(contender, used, "after a replace whose reply was lost");

        String unreadable = fx.key("lost-reply-unreadable");
        holderStore.arm(CREATE, LOSE_REPLY).arm(READ, FAIL_BEFORE);
        claimThenLetGo(holder, unreadable);
        assertFreeLongBeforeTheTtl(contender, unreadable, "after a lost reply whose read-back failed too");
    }

    @Test
    void claimSlowerThanTheValidityWindowIsNeverHandedOut() throws Exception {
        Duration ttl = shortTtl();
        FaultInjectingStore holderStore = faulty();
        LockManager holder = manager(holderStore);
        String k = fx.key("slow-claim");
        // the write lands at once, its reply comes after 90 % of the TTL: past TTL - margin
        holderStore.slow(CREATE, Duration.ZERO, ttl.multipliedBy(9).dividedBy(10));
        try {
            Optional<Lease> lease = fx.tryTake(holder, k, unrenewed(ttl));
            lease.ifPresent(l -> assertThat(l.isValid()).as("lease handed out after a slow claim: %s", l).isTrue());
        } catch (LockBackendException refused) {
            // refused as too slow: the right answer
        }
        fx.pollUntilAcquired(manager(store()), k, longLease(), takeoverLimit(ttl), poll(ttl));
    }

    // ---------------------------------------------------------------- release

    @Test
    void failedReleaseStopsRenewalsSoTheKeyFrees() throws Exception {
        Duration ttl = shortTtl();
        FaultInjectingStore holderStore = faulty();
        LockManager holder = manager(holderStore);
        String k = fx.key("failed-release");
        Lease lease = fx.hold(holder, k, LeaseOptions.ttl(ttl).withOwner(fx.owner("holder"))); // heartbeat on
        // twice: a heartbeat renewal that slips in first may take one
        holderStore.arm(REPLACE, FAIL_BEFORE, 2);
        assertThatThrownBy(lease::release, "release whose write failed").isInstanceOf(LockBackendException.class);
        holderStore.heal();

        assertThat(lease.isValid()).as("a lease whose release failed is no longer valid").isFalse();
        fx.pollUntilAcquired(manager(store()), k, longLease(), takeoverLimit(ttl), poll(ttl));
    }

    // ---------------------------------------------------------------- a store that hangs

    @Test
    void hungRenewalDelaysNeitherLossSignalsNorOtherManagers() throws Exception {
        Duration ttl = shortTtl();
        FaultInjectingStore hanging = faulty();
        LockManager stuck = manager(hanging);
        LockManager healthy = manager(store());
        long start = System.nanoTime();
        // The first renewals through the stuck store hang far longer than this test looks — as many
        // as could occupy every renewer thread the JVM might have for all managers together.
        int hung = 4;
        for (int i = 0; i < hung; i++) hanging.slow(REPLACE, ttl.multipliedBy(30), Duration.ZERO);
        Lease renewing = fx.hold(stuck, fx.key("hung-renewal"), LeaseOptions.ttl(ttl).withOwner(fx.owner("renewing")));
        for (int i = 1; i < hung; i++) {
            fx.hold(stuck, fx.key("hung-renewal-" + i), LeaseOptions.ttl(ttl).withOwner(fx.owner("renewing")));
        }
        Lease idle = fx.hold(stuck, fx.key("hung-neighbour"), unrenewed(ttl));
        Duration longer = ttl.multipliedBy(3);
        Lease elsewhere = fx.hold(healthy, fx.key("other-manager"), LeaseOptions.ttl(longer).withOwner(fx.owner("elsewhere")));
        AtomicLong renewingLost = lostAt(renewing);
        AtomicLong idleLost = lostAt(idle);
        AtomicLong elsewhereLost = lostAt(elsewhere);

        // 6 TTLs in (the renewal hangs for 30): the other manager's lease needed several renewals by now
        paceUntil(start, longer.multipliedBy(2));
        assertThat(renewingLost.get()).as("loss signal of the lease whose renewal hangs, while it hangs").isNotZero();
        assertThat(idleLost.get()).as("loss signal of its neighbour on the same manager").isNotZero();
        assertThat(elsewhereLost.get()).as("another manager's lease was lost while this store hung").isZero();
        assertThat(elsewhere.isValid()).as("another manager's heartbeating lease").isTrue();
    }

    // ---------------------------------------------------------------- keys

    @Test
    void invalidKeysCauseNoStoreRequest() throws Exception {
        FaultInjectingStore counted = faulty();
        LockManager m = manager(counted);
        for (String k : TckKeys.invalid()) {
            for (Runnable call : List.<Runnable>of(() -> m.tryAcquire(k), () -> m.acquire(k, Duration.ofMillis(100)),
                    () -> m.inspect(k), () -> m.forceRelease(k), () -> m.forceRelease(k, "some-lease"))) {
                assertThatThrownBy(call::run, "call with key %s", k == null ? "null" : TckFixture.show(k))
                        .isInstanceOf(InvalidLockKeyException.class);
            }
        }
        long requests = Arrays.stream(FaultInjectingStore.Op.values()).mapToLong(counted::calls).sum();
        assertThat(requests).as("store requests made for invalid keys").isZero();
    }

    // ---------------------------------------------------------------- contention through faults

    @Test
    void contentionThroughRandomFaultsKeepsSectionsApart() throws Exception {
        long seed = ThreadLocalRandom.current().nextLong();
        int managers = 4;
        int threadsPerManager = 2;
        List<FaultInjectingStore> faulty = new ArrayList<>();
        List<LockManager> ms = new ArrayList<>();
        for (int i = 0; i < managers; i++) {
            FaultInjectingStore s = faulty().chaos(0.15, seed + i);
            faulty.add(s);
            ms.add(manager(s));
        }
        String k = fx.key("chaos");
        CriticalSectionChecker checker = new CriticalSectionChecker();
        List<String> invalidInside = new CopyOnWriteArrayList<>();
        int rounds = chaosRounds();
        LeaseOptions o = LeaseOptions.ttl(Duration.ofSeconds(30)).withOwner(fx.owner("chaos"));

        Throwable workerFailure = TckFixture.failureOf(() -> TckFixture.runConcurrently(managers * threadsPerManager, i -> {
            LockManager m = ms.get(i % managers);
            for (int r = 0; r < rounds; r++) {
                Lease lease = acquireThroughFaults(m, k, o);
                TckFixture.criticalSection(checker, lease, invalidInside, "worker " + i + " round " + r);
                try {
                    lease.release();
                } catch (LockBackendException | LeaseLostException e) {
                    // Over locally either way. A release whose answer was lost or refused, found
                    // a successor already in, is reported lost: the lease cannot prove it held to the
                    // end (a false alarm here, the safe side); the checker judges overlaps itself.
                }
            }
            return null;
        }));

        TckFixture.assertContention("contention through random faults on " + TckFixture.show(k) + " (seed " + seed + ")",
                checker, true, managers * threadsPerManager * rounds, invalidInside, workerFailure);
        faulty.forEach(FaultInjectingStore::heal);
        fx.pollUntilAcquired(manager(store()), k, longLease(), Duration.ofSeconds(30).plus(GENEROUS), poll(shortTtl()));
    }

    // ---------------------------------------------------------------- helpers

    private static Lease acquireThroughFaults(LockManager m, String k, LeaseOptions o) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (true) {
            try {
                return m.acquire(k, Duration.ofMinutes(2), o);
            } catch (LockBackendException e) {
                if (System.nanoTime() > deadline) throw e;
            }
        }
    }

    /** A claim with a long TTL whose outcome the test does not care about; a lease won is released. */
    private void claimThenLetGo(LockManager m, String k) {
        try {
            fx.tryTake(m, k, longLease()).ifPresent(Lease::release);
        } catch (LockBackendException e) {
            // the claim failed; what matters is what it left behind
        }
    }

    /** The key must be free within {@link TckFixture#GENEROUS}, well before the 2-minute TTL of the claim. */
    private void assertFreeLongBeforeTheTtl(LockManager contender, String k, String when) throws InterruptedException {
        try {
            fx.pollUntilAcquired(contender, k, longLease(), Duration.ofSeconds(20), Duration.ofMillis(50)).release();
        } catch (AssertionError e) {
            throw new AssertionError("phantom holder " + when + ": " + e.getMessage(), e);
        }
    }

    private static void renewIgnoringStoreErrors(Lease lease) {
        try {
            lease.renew();
        } catch (LockBackendException | LeaseLostException e) {
            // The outcome of a renewal under a fault may be unknown, and a slow store may let the
            // lease run out meanwhile: the lease decides what it is worth; the watch judges it.
        }
    }

    private static AtomicLong lostAt(Lease lease) {
        AtomicLong at = new AtomicLong();
        lease.onLost(e -> at.set(System.nanoTime()));
        return at;
    }

    private LeaseOptions unrenewed(Duration ttl) {
        return LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner(fx.owner("holder"));
    }

    private LeaseOptions longLease() {
        return LeaseOptions.ttl(Duration.ofMinutes(2)).withOwner(fx.owner("contender"));
    }

    private static Duration poll(Duration ttl) {
        return Duration.ofMillis(Math.max(5, ttl.toMillis() / 50));
    }

    private static Duration takeoverLimit(Duration ttl) {
        return ttl.multipliedBy(10).plus(GENEROUS);
    }

    private FaultInjectingStore faulty() throws Exception {
        return new FaultInjectingStore(store());
    }

    private ConditionalStore store() throws Exception {
        ConditionalStore s = newStore();
        assertThat(s).as("newStore returned null").isNotNull();
        stores.add(s);
        return s;
    }

    private LockManager manager(ConditionalStore store) {
        return fx.track(newManager(store, LockContext.defaults()));
    }
}
