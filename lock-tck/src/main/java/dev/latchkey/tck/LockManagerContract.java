package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.InvalidLockKeyException;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.TimeSource;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract every {@link LockManager} keeps, as JUnit 5 tests. A backend proves itself by
 * subclassing this in its test sources and implementing one factory:
 * <pre>{@code
 * class MyBackendTckTest extends LockManagerContract {
 *     @Override protected LockManager newManager(LockContext context) {
 *         return Latchkey.open(myServerUri, context);
 *     }
 * }
 * }</pre>
 * Each call to {@link #newManager(LockContext)} must return a fresh, independent manager on the
 * <em>same</em> backing store — its own connections, as if in another process. The contract closes
 * every manager (and releases every lease it took) after each test. Keys carry a random tag, so
 * tests and runs sharing one store never collide.
 *
 * <p><b>What is checked</b>: mutual exclusion (across threads and managers, under contention with
 * an overlap and lost-update referee), release, renew and heartbeat past the TTL, takeover of an
 * abandoned lease after its TTL and never before, force release (the broken holder's renew and
 * release raise {@link LeaseLostException} without disturbing the new holder), lease-loss
 * listeners, the events a {@link dev.latchkey.LockListener} sees (in {@link LockEventsContract},
 * which this class implements), fencing-token order, hostile and invalid keys, that the manager
 * uses the {@link LockContext} it was built with, that a client whose wall clock is an hour off takes
 * nothing early, and — given {@link #uriForOtherProcesses()} — exclusion across
 * JVMs and the fate of a lock whose holder process was killed. Declared capabilities are held to
 * their word: {@code FENCING_TOKENS} (token order), {@code LIST}, {@code SERVER_SIDE_EXPIRY} (a
 * contender needs neither a watch of its own nor a right clock), {@code NATIVE_WAIT} (given
 * {@link #newManagerPollingEvery}: a waiter is woken long before its poll), {@code HOLDER_DEATH_DETECTION}
 * (a killed holder's lock is freed long before its TTL). Tests of an undeclared {@link Capability} are
 * skipped through JUnit assumptions that name the capability.
 *
 * <p><b>Timing</b>: every time-based test asserts orderings measured on the monotonic clock
 * ("the contender's success came at least a TTL after the holder started acquiring"), never an
 * upper bound tighter than many seconds, so a loaded machine slows the run but does not fail it.
 * Tune with {@link #shortTtl()} and the contention hooks for slow stores.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
public abstract class LockManagerContract implements LockEventsContract {

    private static final Duration GENEROUS = TckFixture.GENEROUS;

    /** Per test: a random tag (keys never collide across tests or runs on a shared store), cleanup. */
    private final TckFixture fx = new TckFixture();

    /**
     * A fresh, independent manager on the backend under test, built with {@code context} (which
     * may carry a skewed wall clock). Called several times per test; each must behave like a
     * separate process sharing the store.
     */
    protected abstract LockManager newManager(LockContext context) throws Exception;

    /** {@link #newManager(LockContext)} with default clocks; the manager is closed after the test. */
    protected final LockManager newManager() throws Exception {
        return manager(LockContext.defaults());
    }

    /**
     * TTL of the leases that the expiry, takeover, renew, heartbeat and clock-skew tests let run
     * out or keep alive. Default 1 s. Raise it for a store whose round trip is more than a few
     * percent of it or whose expiry has coarse resolution (e.g. whole seconds). Tests wait about
     * 2.5 times this value.
     */
    protected Duration shortTtl() {
        return Duration.ofSeconds(1);
    }

    /**
     * The longest TTL the backend accepts (Azure blob leases: 60 s). Tests that want long leases
     * cap them here. Default 1 hour.
     */
    protected Duration maxTtl() {
        return Duration.ofHours(1);
    }

    /** Independent managers in the contention test. Default 4. */
    protected int contentionManagers() {
        return 4;
    }

    /** Threads per manager in the contention test. Default 2. */
    protected int contentionThreadsPerManager() {
        return 2;
    }

    /** Critical sections each contention thread runs. Default 25 (so 200 in all by default). */
    protected int contentionRounds() {
        return 25;
    }

    /**
     * How long one {@code acquire} may wait in the contention test before the test fails.
     * Default 2 minutes: long enough for every other thread to pass ahead on a slow store.
     */
    protected Duration contentionMaxWait() {
        return Duration.ofMinutes(2);
    }

    /**
     * The backend's URI as another process would open it, for the multi-process tests: child JVMs
     * get this JVM's class path, the URI in an environment variable (never on a command line) and
     * {@link #childJvmArguments()}.
     * Default {@code null}: those tests are skipped, as they must be for {@code mem://}, whose
     * store lives inside one JVM.
     */
    protected String uriForOtherProcesses() {
        return null;
    }

    /**
     * Another way to open a manager on the same backend that a user might configure for the same
     * locks — another mode, table, schema or prefix spelling. {@link #clientsConfiguredDifferentlyNeverBothHold}
     * races each against {@link #newManager}: on one key they must exclude each other, or the second
     * must fail with a non-retriable {@code LockBackendException} naming the mismatch.
     */
    public interface OtherConfiguration {
        /** For messages, e.g. {@code "mode=lease"}. */
        String name();

        LockManager open(LockContext context) throws Exception;
    }

    /** Other configurations addressing this backend's locks (see {@link OtherConfiguration}). Default none. */
    protected List<OtherConfiguration> otherConfigurations() {
        return List.of();
    }

    /**
     * For the {@link Capability#NATIVE_WAIT} test: a manager like {@link #newManager(LockContext)}
     * (same store, own connections) whose waiters, when nothing wakes them, look at a held key again
     * only after {@code poll} — for instance the URI with {@code poll=} set, as PostgreSQL and the Redis
     * example take it, or a {@code LeaseEngine} built with {@code maxPoll = poll}. The test asks for a
     * poll of 40 s and fails unless a waiter gets the
     * released key within half of it, so only a wake-up by the store passes. (A {@code LeaseEngine}'s
     * pauses start at a millisecond and double up to its {@code maxPoll}, so for it this test alone
     * cannot tell a wake-up from an early look; {@link ConditionalStoreContract#wakesOnChange()}
     * checks its store's {@code awaitChange}.) Default {@code null}: the test is skipped, naming this
     * hook; a backend declaring NATIVE_WAIT should override it.
     */
    protected LockManager newManagerPollingEvery(Duration poll, LockContext context) throws Exception {
        return null;
    }

    /**
     * Options for the child JVMs of the multi-process tests, before their main class: the system
     * properties ({@code -Dname=value}) and JVM options ({@code --add-opens …}) the backend needs
     * there, since a child gets none of this JVM's. They travel in an owner-only argument file, never
     * on a command line, and are never printed. Default
     * {@link MultiProcessContention#forwardedSystemProperties()} ({@code latchkey.*}, TLS stores,
     * proxies); to add to it, override and append to {@code super.childJvmArguments()}.
     */
    protected List<String> childJvmArguments() {
        return MultiProcessContention.forwardedSystemProperties();
    }

    /** JVMs in the multi-process contention test. Default 4. */
    protected int processContenders() {
        return 4;
    }

    /** Critical sections each of those JVMs runs. Default 10. */
    protected int processRounds() {
        return 10;
    }

    @AfterEach
    void closeEverything() {
        fx.closeAll();
    }

    // ---------------------------------------------------------------- single holder and basics

    @Test
    void singleHolder() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("single");
        Lease lease = hold(a, k, longLease("holder"));

        assertThat(lease.key()).isEqualTo(k);
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.leaseId()).isNotBlank();
        assertThat(lease.owner()).isEqualTo(owner("holder"));
        assertThat(tryTake(b, k, longLease("contender"))).as("second manager while held").isEmpty();
        assertThat(tryTake(a, k, longLease("contender"))).as("same manager again while held (locks are not reentrant)").isEmpty();

        LockInfo info = b.inspect(k).orElseThrow(() -> new AssertionError("inspect shows no holder of a held key"));
        assertThat(info.key()).isEqualTo(k);
        assertThat(info.leaseId()).isEqualTo(lease.leaseId());
        assertThat(info.owner()).isEqualTo(owner("holder"));
        assertThat(info.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void ownerAndMetadataRoundTripThroughInspect() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("metadata");
        Map<String, String> metadata = Map.of("job", "nightly-export", "run.id", "42",
                "note", "'quoted' \"double\" =&%; \u00fcn\u00efc\u00f6d\u00e9 \uD83D\uDD12", "empty", "");
        String owner = owner("ops") + " (host: build-7; pid 4242)";
        Lease lease = hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner(owner).withMetadata(metadata));

        LockInfo info = b.inspect(k).orElseThrow(() -> new AssertionError("inspect shows no holder of a held key"));
        assertThat(info.owner()).isEqualTo(owner);
        assertThat(info.metadata()).isEqualTo(metadata);
        assertThat(lease.info().metadata()).isEqualTo(metadata);
    }

    @Test
    void racingTryAcquireOnOneManagerHasOneWinner() throws Exception {
        LockManager a = newManager();
        String k = key("same-manager-race");
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Optional<Lease>>> attempts = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                attempts.add(pool.submit(() -> {
                    go.await();
                    return tryTake(a, k, longLease("racer"));
                }));
            }
            go.countDown();
            int winners = 0;
            for (Future<Optional<Lease>> f : attempts) {
                if (f.get(GENEROUS.toSeconds(), TimeUnit.SECONDS).isPresent()) winners++;
            }
            assertThat(winners).as("threads of one manager racing tryAcquire on a free key").isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void twoKeysAreIndependent() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k1 = key("one");
        String k2 = key("two");
        Lease l1 = hold(a, k1, longLease("one"));
        Lease l2 = hold(b, k2, longLease("two"));

        assertThat(tryTake(b, k1, longLease("x"))).isEmpty();
        assertThat(tryTake(a, k2, longLease("x"))).isEmpty();
        assertThat(a.inspect(k1).map(LockInfo::leaseId)).contains(l1.leaseId());
        assertThat(a.inspect(k2).map(LockInfo::leaseId)).contains(l2.leaseId());

        l1.release();
        assertThat(l2.isValid()).as("releasing one key leaves the other held").isTrue();
        assertThat(a.inspect(k2).map(LockInfo::leaseId)).contains(l2.leaseId());
        assertThat(tryTake(a, k2, longLease("x"))).isEmpty();
    }

    @Test
    void releaseThenReacquire() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("release");
        Lease first = hold(a, k, longLease("first"));
        first.release();

        assertThat(first.isValid()).as("a released lease is not valid").isFalse();
        first.release(); // idempotent once it succeeded
        assertThat(b.inspect(k)).as("inspect after release").isEmpty();

        Lease second = hold(b, k, longLease("second"));
        assertThat(second.leaseId()).isNotEqualTo(first.leaseId());
        second.close();
        Lease third = hold(a, k, longLease("third"));
        assertThat(third.isValid()).isTrue();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(third.leaseId());
    }

    @Test
    void inspectOfFreeKeyIsEmpty() throws Exception {
        LockManager a = newManager();
        assertThat(a.inspect(key("never-used"))).isEmpty();
    }

    @Test
    void tryAcquireNeverWaits() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("no-wait");
        Lease holder = hold(a, k, longLease("holder"));
        // The holder lets go after 5 s: a tryAcquire that waits, for however short a time, ends up
        // with the lease; one that never waits comes back empty long before.
        CompletableFuture<Void> release = CompletableFuture.runAsync(() -> {
            try {
                TckFixture.pace(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            holder.release();
        });
        Optional<Lease> attempt = TckFixture.within(GENEROUS, "tryAcquire on a held key",
                () -> tryTake(b, k, longLease("contender")));
        assertThat(attempt).as("tryAcquire on a key held for 5 more seconds (it must not wait)").isEmpty();
        release.get(GENEROUS.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void acquireTimesOutNamingTheHolder() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("timeout");
        String holder = owner("holder-to-name");
        hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner(holder));

        Duration maxWait = Duration.ofMillis(300);
        long start = System.nanoTime();
        assertThatThrownBy(() -> track(b.acquire(k, maxWait, longLease("waiter"))))
                .isExactlyInstanceOf(LockTimeoutException.class)
                .hasMessageContaining(holder)
                .satisfies(t -> {
                    LockTimeoutException e = (LockTimeoutException) t;
                    assertThat(e.key()).isEqualTo(k);
                    e.holder().ifPresent(h -> assertThat(h.owner()).isEqualTo(holder));
                });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time acquire waited before timing out")
                .isGreaterThanOrEqualTo(maxWait);
    }

    @Test
    void acquireWaitsForRelease() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("handoff");
        Lease first = hold(a, k, longLease("first"));
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
            waiting.countDown();
            return track(b.acquire(k, GENEROUS.multipliedBy(2), longLease("waiter")));
        });
        // The waiter must be seen waiting on the held key — inside acquire for a whole second
        // without returning — before the key is released; an acquire that never waits has thrown by then.
        assertThat(waiting.await(GENEROUS.toSeconds(), TimeUnit.SECONDS)).as("waiter started").isTrue();
        assertThatThrownBy(() -> waiter.get(1, TimeUnit.SECONDS), "acquire on a held key returned (or threw) before the key was released")
                .isInstanceOf(TimeoutException.class);
        first.release();
        Lease second = waiter.get(GENEROUS.toSeconds() * 2 + 10, TimeUnit.SECONDS);
        assertThat(second.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(second.leaseId());
        if (declares(a, Capability.FENCING_TOKENS)) {
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        }
    }

    // ---------------------------------------------------------------- renew, heartbeat, expiry

    @Test
    void renewKeepsLeasePastItsTtl() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("renew");
        Duration ttl = keepAliveTtl();
        Lease lease = hold(a, k, LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner(owner("renewer")));
        long start = System.nanoTime();
        int renewals = 0;
        while (System.nanoTime() - start < ttl.toNanos() * 3 / 2) {
            lease.renew();
            renewals++;
            assertThat(lease.isValid()).isTrue();
            assertThat(tryTake(b, k, abandoned("contender")))
                    .as("contender after %d renewals, %d ms into a %d ms lease", renewals,
                            TckFixture.elapsedMillis(start), ttl.toMillis())
                    .isEmpty();
            TckFixture.pace(ttl.dividedBy(10));
        }
        assertThat(lease.isValid()).isTrue();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(lease.leaseId());
        lease.release();
        assertThat(b.inspect(k)).isEmpty();
    }

    @Test
    void heartbeatKeepsLeaseAliveUnattended() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("heartbeat");
        Duration ttl = keepAliveTtl();
        Lease lease = hold(a, k, LeaseOptions.ttl(ttl).withOwner(owner("heartbeat"))); // default heartbeat ttl/3
        AtomicBoolean lost = new AtomicBoolean();
        lease.onLost(e -> lost.set(true));
        long start = System.nanoTime();
        while (System.nanoTime() - start < ttl.toNanos() * 3 / 2) {
            assertThat(tryTake(b, k, abandoned("contender")))
                    .as("contender %d ms into a heartbeating %d ms lease", TckFixture.elapsedMillis(start), ttl.toMillis())
                    .isEmpty();
            assertThat(lease.isValid()).as("heartbeating lease %d ms in", TckFixture.elapsedMillis(start)).isTrue();
            TckFixture.pace(pollInterval());
        }
        assertThat(lost).as("lease-lost listener of a heartbeating lease").isFalse();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(lease.leaseId());
        lease.release();
    }

    @Test
    void abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("abandoned");
        Duration ttl = shortTtl();
        long acquireStart = System.nanoTime();
        Lease old = hold(a, k, abandoned("crashed"));
        CountDownLatch lostFired = new CountDownLatch(1);
        old.onLost(e -> lostFired.countDown());

        Lease taken = pollUntilAcquired(b, k, longLease("successor"), takeoverLimit());
        long takenAt = System.nanoTime();

        assertThat(Duration.ofNanos(takenAt - acquireStart))
                .as("time from the holder's acquire to the contender's takeover (TTL %s)", ttl)
                .isGreaterThanOrEqualTo(ttl);
        assertThat(old.isValid()).as("the abandoned lease once someone else holds the key").isFalse();
        assertThat(lostFired.await(GENEROUS.toMillis(), TimeUnit.MILLISECONDS))
                .as("lease-lost listener of the abandoned lease fired").isTrue();
        assertThatThrownBy(old::renew).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(old::release).isInstanceOf(LeaseLostException.class);
        assertThat(taken.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).as("inspect after the old holder's failed release")
                .contains(taken.leaseId());
        if (declares(a, Capability.FENCING_TOKENS)) {
            assertThat(taken.fencingToken()).isGreaterThan(old.fencingToken());
        }
    }

    @Test
    void lostListenerFiresWhenBrokenWhileHeartbeating() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("lost-listener");
        // A TTL far longer than the heartbeat: only a heartbeat can find the break before the
        // lease's own deadline (TTL - TTL/5) would end it anyway. The heartbeat (shortTtl/2) leaves
        // the breaker room on stores that take one write per interval to a record (GCS: shortTtl/3
        // is that interval, so a holder heartbeating at it would take every write slot).
        Duration wanted = GENEROUS.compareTo(shortTtl().multipliedBy(10)) > 0 ? GENEROUS : shortTtl().multipliedBy(10);
        Duration ttl = wanted.compareTo(maxTtl()) > 0 ? maxTtl() : wanted;
        long acquiring = System.nanoTime();
        Lease lease = hold(a, k, LeaseOptions.ttl(ttl).withHeartbeat(shortTtl().dividedBy(2)).withOwner(owner("victim")));
        CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        AtomicBoolean validWhenFired = new AtomicBoolean(true);
        AtomicLong firedAt = new AtomicLong();
        lease.onLost(e -> {
            firedAt.set(System.nanoTime());
            validWhenFired.set(lease.isValid());
            lost.complete(e);
        });

        long broken = System.nanoTime();
        assertThat(b.forceRelease(k)).isTrue();
        LeaseLostException cause = lost.get(ttl.toSeconds() + GENEROUS.toSeconds(), TimeUnit.SECONDS);
        // the residual window of force release, measured: how long the broken holder stayed valid
        System.out.println("fault-table: " + getClass().getSimpleName() + " | force release under a heartbeating holder | invalid "
                + TimeUnit.NANOSECONDS.toMillis(firedAt.get() - broken) + " ms after forceRelease was called (heartbeat "
                + shortTtl().dividedBy(2).toMillis() + " ms)");

        assertThat(Duration.ofNanos(firedAt.get() - acquiring))
                .as("loss noticed before the lease's own deadline (%s of a %s TTL) could end it", ttl.multipliedBy(4).dividedBy(5), ttl)
                .isLessThan(ttl.multipliedBy(4).dividedBy(5));
        assertThat(cause.reason()).as("reason of a loss by force release (%s)", cause.getMessage())
                .isIn(LeaseLostException.Reason.BROKEN, LeaseLostException.Reason.SESSION_ENDED);
        assertThat(validWhenFired).as("isValid() as seen by the listener").isFalse();
        assertThat(lease.isValid()).isFalse();
        AtomicBoolean late = new AtomicBoolean();
        lease.onLost(e -> late.set(true));
        assertThat(late).as("a listener added after the loss runs at once").isTrue();
        assertThatThrownBy(lease::release).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void lostListenerFiresWhenAbandonedLeaseRunsOut() throws Exception {
        LockManager a = newManager();
        String k = key("runs-out");
        Lease lease = hold(a, k, abandoned("forgetful"));
        CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
        AtomicBoolean validWhenFired = new AtomicBoolean(true);
        lease.onLost(e -> {
            validWhenFired.set(lease.isValid());
            lost.complete(e);
        });
        assertThat(lost.get(shortTtl().toSeconds() + GENEROUS.toSeconds(), TimeUnit.SECONDS)).isNotNull();
        assertThat(validWhenFired).as("isValid() as seen by the listener").isFalse();
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void lostListenerIsNotCalledOnRelease() throws Exception {
        LockManager a = newManager();
        String k = key("released-not-lost");
        Lease lease = hold(a, k, LeaseOptions.ttl(shortTtl()).withOwner(owner("tidy")));
        AtomicBoolean lost = new AtomicBoolean();
        lease.onLost(e -> lost.set(true));
        long start = System.nanoTime();
        lease.release();
        // nothing to await: give a wrongly kept heartbeat or deadline task the time to misfire
        TckFixture.pace(Duration.ofNanos(shortTtl().toNanos() * 3 / 2 - (System.nanoTime() - start)));
        assertThat(lost).as("lease-lost listener after a normal release").isFalse();
    }

    // ---------------------------------------------------------------- force release

    @Test
    void forceReleaseBreaksTheHolderWithoutDisturbingTheNext() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        LockManager c = newManager();
        String k = key("force");
        Lease old = hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat().withOwner(owner("old")));

        assertThat(b.forceRelease(k)).as("forceRelease of a held key").isTrue();
        assertThat(b.inspect(k)).as("inspect after forceRelease").isEmpty();
        Lease next = hold(c, k, longLease("next"));

        assertThatThrownBy(old::renew).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(old::release).isInstanceOf(LeaseLostException.class);
        assertThat(old.isValid()).isFalse();

        assertThat(next.isValid()).as("new holder after the old one's failed renew and release").isTrue();
        for (LockManager m : List.of(a, b, c)) {
            assertThat(m.inspect(k).map(LockInfo::leaseId)).contains(next.leaseId());
        }
        next.renew();
        assertThat(tryTake(a, k, longLease("x"))).isEmpty();
        if (declares(a, Capability.FENCING_TOKENS)) {
            assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
        }
        next.release();
        assertThat(a.inspect(k)).isEmpty();
    }

    @Test
    void brokenHolderCannotReleaseTheFreedKey() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("force-free");
        Lease old = hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat().withOwner(owner("old")));
        assertThat(b.forceRelease(k)).isTrue();

        assertThatThrownBy(old::release, "release after being broken, nobody else holding")
                .isInstanceOf(LeaseLostException.class);
        Lease next = hold(b, k, longLease("next"));
        assertThatThrownBy(old::renew).isInstanceOf(LeaseLostException.class);
        assertThat(next.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(next.leaseId());
    }

    @Test
    void forceReleaseOfALeaseIdBreaksThatLeaseAndNoOther() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        String k = key("force-lease-id");
        Lease old = hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat().withOwner(owner("old")));
        String inspected = b.inspect(k).map(LockInfo::leaseId)
                .orElseThrow(() -> new AssertionError("inspect shows no holder of a held key"));

        assertThat(b.forceRelease(k, "not-" + inspected)).as("forceRelease naming another lease id").isFalse();
        assertThat(old.isValid()).as("holder after a forceRelease that named another lease").isTrue();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(old.leaseId());

        assertThat(b.forceRelease(k, inspected)).as("forceRelease naming the holder's lease id").isTrue();
        assertThatThrownBy(old::renew, "renew of the broken lease").isInstanceOf(LeaseLostException.class)
                .satisfies(e -> assertThat(((LeaseLostException) e).reason())
                        .isIn(LeaseLostException.Reason.BROKEN, LeaseLostException.Reason.SESSION_ENDED));

        // a successor that came after the inspect is left alone
        Lease next = hold(b, k, longLease("next"));
        assertThat(a.forceRelease(k, inspected)).as("forceRelease of the old lease id once a successor holds").isFalse();
        assertThat(next.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(next.leaseId());
        next.release();
        assertThat(a.forceRelease(k, next.leaseId())).as("forceRelease of a released lease").isFalse();
    }

    @Test
    void clientsConfiguredDifferentlyNeverBothHold() throws Exception {
        List<OtherConfiguration> others = otherConfigurations();
        Assumptions.assumeFalse(others.isEmpty(),
                "otherConfigurations() is empty: the backend declares no other way to address its locks");
        List<String> failures = new ArrayList<>();
        int n = 0;
        int raced = 0;
        for (OtherConfiguration other : others) {
            for (boolean otherHolds : List.of(false, true)) {
                String k = key("configs-" + n++);
                LockManager usual = newManager();
                LockManager different = fx.track(other.open(LockContext.defaults()));
                LockManager holder = otherHolds ? different : usual;
                LockManager contender = otherHolds ? usual : different;
                String who = otherHolds ? other.name() + " holds, the usual configuration contends"
                        : "the usual configuration holds, " + other.name() + " contends";
                Lease held;
                try {
                    held = hold(holder, k, longLease("configured"));
                } catch (dev.latchkey.LockException refused) {
                    continue; // this configuration refuses to lock at all here: it cannot hold twice
                }
                raced++;
                try {
                    Optional<Lease> second = tryTake(contender, k, longLease("other-config"));
                    if (second.isPresent()) failures.add(who + ": both hold " + show(k));
                } catch (LockBackendException e) {
                    // refusing with an error that names the mismatch is allowed; it must say so
                    if (e.isRetriable()) failures.add(who + ": the contender's error is retriable: " + e.getMessage());
                } catch (dev.latchkey.LockException e) {
                    failures.add(who + ": unexpected " + e);
                }
                assertThat(held.isValid()).as("%s: the holder", who).isTrue();
            }
        }
        assertThat(failures).as("clients of one key configured differently").isEmpty();
        assertThat(raced).as("races in which one of the configurations could hold the key at all").isPositive();
    }

    @Test
    void forceReleaseOfFreeKeyReturnsFalse() throws Exception {
        LockManager a = newManager();
        String k = key("force-nothing");
        assertThat(a.forceRelease(k)).as("never used").isFalse();
        hold(a, k, longLease("brief")).release();
        assertThat(a.forceRelease(k)).as("released").isFalse();
    }

    // ---------------------------------------------------------------- fencing

    @Test
    void fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease() throws Exception {
        LockManager a = newManager();
        requireCapability(a, Capability.FENCING_TOKENS);
        LockManager b = newManager();
        LockManager c = newManager();
        String k = key("fencing");
        List<Long> tokens = new ArrayList<>();

        Lease l = hold(a, k, longLease("1"));                      // first ever
        tokens.add(checkedToken(b, l));
        l.release();
        l = hold(b, k, longLease("2"));                             // after release, other manager
        tokens.add(checkedToken(a, l));
        l.release();
        l = hold(b, k, longLease("3"));                             // after release, same manager
        tokens.add(checkedToken(a, l));
        assertThat(c.forceRelease(k)).isTrue();
        l = hold(a, k, abandoned("4"));                             // after force release
        tokens.add(checkedToken(c, l));
        l = pollUntilAcquired(c, k, longLease("5"), takeoverLimit()); // after takeover
        tokens.add(checkedToken(a, l));
        l.release();
        l = hold(a, k, longLease("6"));
        tokens.add(checkedToken(b, l));

        assertThat(tokens).as("fencing tokens of successive holders").allMatch(t -> t > 0);
        assertThat(tokens).as("fencing tokens of successive holders").isSorted().doesNotHaveDuplicates();
    }

    // ---------------------------------------------------------------- keys

    @Test
    void hostileKeysLockIndependentlyAndRoundTrip() throws Exception {
        LockManager a = newManager();
        LockManager b = newManager();
        List<String> keys = TckKeys.hostile(fx.tag);
        assertThat(keys).as("hostile keys (the README quotes this number)").hasSize(57);
        List<String> failures = new ArrayList<>();
        Map<String, Lease> held = new LinkedHashMap<>();

        for (String k : keys) {
            check(failures, k, "tryAcquire", () -> {
                Optional<Lease> l = tryTake(a, k, longLease("hostile"));
                if (l.isEmpty()) return "free key refused (collides with another hostile key?)";
                held.put(k, l.get());
                return l.get().key().equals(k) ? null : "lease.key() is " + show(l.get().key());
            });
        }
        for (Map.Entry<String, Lease> e : held.entrySet()) {
            String k = e.getKey();
            check(failures, k, "second manager's tryAcquire", () ->
                    tryTake(b, k, longLease("x")).isPresent() ? "acquired a held key" : null);
            check(failures, k, "inspect", () -> {
                Optional<LockInfo> info = b.inspect(k);
                if (info.isEmpty()) return "held key shows no holder";
                if (!info.get().key().equals(k)) return "key came back as " + show(info.get().key());
                return info.get().leaseId().equals(e.getValue().leaseId()) ? null : "leaseId differs";
            });
        }
        for (Map.Entry<String, Lease> e : held.entrySet()) {
            check(failures, e.getKey(), "release", () -> {
                e.getValue().release();
                return b.inspect(e.getKey()).isPresent() ? "still held after release" : null;
            });
        }
        assertThat(failures).as("hostile keys that misbehaved (of %d)", keys.size()).isEmpty();
    }

    @Test
    void invalidKeysAreRefusedBeforeAnyIo() throws Exception {
        LockManager a = newManager();
        LeaseOptions o = longLease("invalid");
        for (String k : TckKeys.invalid()) {
            String what = k == null ? "null" : show(k);
            assertThatThrownBy(() -> track(a.tryAcquire(k)), "tryAcquire(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> track(a.tryAcquire(k, o)), "tryAcquire(%s, options)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> track(a.acquire(k, Duration.ofMillis(100))), "acquire(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> track(a.acquire(k, Duration.ofMillis(100), o)), "acquire(%s, options)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> a.inspect(k), "inspect(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> a.forceRelease(k), "forceRelease(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> a.forceRelease(k, "a-lease-id"), "forceRelease(%s, leaseId)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
        }
    }

    @Test
    void listByPrefix() throws Exception {
        LockManager a = newManager();
        requireCapability(a, Capability.LIST);
        LockManager b = newManager();
        // '%' and '_' must be literal: a LIKE pattern built from the prefix would also match "ZZx/"
        String prefix = key("list%_x/");
        Lease one = hold(a, prefix + "one", longLease("lister"));
        Lease two = hold(b, prefix + "two", longLease("lister"));
        hold(a, key("listZZx/") + "decoy", longLease("decoy"));
        hold(a, key("lis"), longLease("decoy"));
        hold(a, prefix + "gone", longLease("gone")).release();

        Map<String, String> listed = a.list(prefix).stream()
                .collect(Collectors.toMap(LockInfo::key, LockInfo::leaseId));
        assertThat(listed).as("list(%s)", prefix).containsExactlyInAnyOrderEntriesOf(Map.of(
                prefix + "one", one.leaseId(), prefix + "two", two.leaseId()));
        assertThat(b.list(key(""))).extracting(LockInfo::key).as("list of the whole test tag")
                .containsExactlyInAnyOrder(prefix + "one", prefix + "two", key("listZZx/") + "decoy", key("lis"));
        one.release();
        assertThat(b.list(prefix)).extracting(LockInfo::key).containsExactly(prefix + "two");
    }

    // ---------------------------------------------------------------- clock skew

    /**
     * The manager is built with the context it was given, so the clock-skew tests test something:
     * its leases read the context's clocks. The context's clocks run a day ahead ({@link ContextClock}):
     * a manager that opened a default context never reads its monotonic clock and labels the lease
     * with the system's wall clock; one that mixes the two monotonic clocks finds the lease a day old
     * on arrival.
     */
    @Test
    void managerUsesTheContextItWasGiven() throws Exception {
        ContextClock clock = new ContextClock(Duration.ofDays(1));
        LockManager m = manager(LockContext.defaults().withTime(clock));
        String invariant = "newManager(context) must build the manager with the context it was given (its"
                + " TimeSource runs " + clock.offset() + " ahead)";
        Instant before = Instant.now().plus(clock.offset());
        Lease lease;
        try {
            lease = hold(m, key("context"), longLease("holder"));
        } catch (LockBackendException e) {
            throw new AssertionError(invariant + ": tryAcquire failed — does the backend mix the context's"
                    + " nanoTime() with System.nanoTime()?", e);
        }
        Instant after = Instant.now().plus(clock.offset());
        assertThat(clock.monotonicReads()).as("%s: reads of its monotonic clock while acquiring", invariant).isPositive();
        // an hour either side absorbs a wall-clock step; a manager on the system clock is a day off
        assertThat(lease.acquiredAt()).as("%s: the lease's acquiredAt", invariant)
                .isBetween(before.minus(Duration.ofHours(1)), after.plus(Duration.ofHours(1)));
        assertThat(lease.isValid()).as("%s: the lease just acquired is valid", invariant).isTrue();
    }

    /**
     * A wall clock an hour ahead or behind, on the holder or on the contender: nothing is taken
     * before the TTL has passed by the store's judgement, and a heartbeating lease is never taken.
     * The four cases run at once on their own keys and managers (each waits out a TTL or more;
     * in a row they would take four times as long), and every case's failure is reported.
     */
    @Test
    void skewedWallClockTakesNothingEarly() throws Exception {
        record Skew(Duration offset, boolean holderSkewed, LockManager holder, LockManager contender) {
            String label() {
                return "wall clock " + offset.abs() + (offset.isNegative() ? " behind" : " ahead")
                        + " on the " + (holderSkewed ? "holder" : "contender");
            }
        }
        List<Skew> cases = new ArrayList<>();
        for (Duration offset : List.of(Duration.ofHours(1), Duration.ofHours(-1))) {
            for (boolean holderSkewed : List.of(false, true)) {
                LockManager skewed = manager(LockContext.defaults().withTime(TimeSource.wallClockOffsetBy(offset)));
                LockManager plain = newManager();
                cases.add(holderSkewed ? new Skew(offset, true, skewed, plain) : new Skew(offset, false, plain, skewed));
            }
        }
        TckFixture.runConcurrently(cases.size(), i -> {
            Skew c = cases.get(i);
            try {
                skewCase(c.holder(), c.contender(), "skew" + i);
            } catch (AssertionError e) {
                throw new AssertionError(c.label() + ": " + e.getMessage(), e);
            }
            return null;
        });
    }

    private void skewCase(LockManager holder, LockManager contender, String name) throws Exception {
        Duration ttl = shortTtl();
        String liveKey = key(name + "-live");
        String deadKey = key(name + "-abandoned");

        // The live lease outlasts the whole observation window even if a loaded machine stalls
        // its heartbeat: this test is about clocks, heartbeatKeepsLeaseAliveUnattended about heartbeats.
        Lease live = hold(holder, liveKey, LeaseOptions.ttl(ttl.multipliedBy(4))
                .withHeartbeat(ttl.dividedBy(3)).withOwner(owner("live")));
        long deadStart = System.nanoTime();
        Lease dead = hold(holder, deadKey, abandoned("dead"));
        Long takenAt = null;
        while (System.nanoTime() - deadStart < ttl.toNanos() * 5 / 2) {
            assertThat(tryTake(contender, liveKey, longLease("contender")))
                    .as("contender on a heartbeating lease, %d ms in", TckFixture.elapsedMillis(deadStart)).isEmpty();
            if (takenAt == null && tryTake(contender, deadKey, longLease("contender")).isPresent()) {
                takenAt = System.nanoTime();
            }
            TckFixture.pace(pollInterval());
        }
        if (takenAt == null) {
            pollUntilAcquired(contender, deadKey, longLease("contender"), takeoverLimit());
            takenAt = System.nanoTime();
        }
        assertThat(Duration.ofNanos(takenAt - deadStart)).as("takeover of the abandoned lease after (TTL %s)", ttl)
                .isGreaterThanOrEqualTo(ttl);
        assertThat(dead.isValid()).isFalse();
        assertThat(live.isValid()).as("heartbeating lease").isTrue();
        assertThat(contender.inspect(liveKey).map(LockInfo::leaseId)).contains(live.leaseId());
    }

    // ---------------------------------------------------------------- declared capabilities

    /**
     * {@link Capability#SERVER_SIDE_EXPIRY}: a contender that never watched an abandoned lease gets it
     * once the store's clock says it ran out, and one whose monotonic clock runs fast takes nothing
     * early ({@link CapabilityChecks#serverSideExpiry}). About one TTL.
     */
    @Test
    void serverSideExpiryNeedsNoWatchAndNoClockOfTheContender() throws Exception {
        LockManager holder = newManager();
        requireCapability(holder, Capability.SERVER_SIDE_EXPIRY);
        capabilityChecks().serverSideExpiry(holder);
    }

    /**
     * {@link Capability#NATIVE_WAIT}: a waiter whose poll interval is long gets a released key long
     * before it would have looked again ({@link CapabilityChecks#nativeWait}). About 0.3 s.
     */
    @Test
    void nativeWaitWakesAWaiterLongBeforeItsPoll() throws Exception {
        LockManager holder = newManager();
        requireCapability(holder, Capability.NATIVE_WAIT);
        LockManager waiter = newManagerPollingEvery(CapabilityChecks.NATIVE_WAIT_POLL, LockContext.defaults());
        Assumptions.assumeTrue(waiter != null, () -> holder.description() + " declares NATIVE_WAIT, but"
                + " newManagerPollingEvery(poll, context) is not overridden: the kit cannot tell a wake-up from a poll; test skipped");
        capabilityChecks().nativeWait(holder, fx.track(waiter));
    }

    private CapabilityChecks capabilityChecks() {
        return new CapabilityChecks(fx, this::manager, shortTtl(), pollInterval(), takeoverLimit());
    }

    // ---------------------------------------------------------------- contention

    @Test
    void contentionKeepsCriticalSectionsApart() throws Exception {
        List<LockManager> ms = new ArrayList<>();
        for (int i = 0; i < contentionManagers(); i++) ms.add(newManager());
        boolean fencing = declares(ms.get(0), Capability.FENCING_TOKENS);
        String k = key("contention");
        int rounds = contentionRounds();
        int threads = contentionManagers() * contentionThreadsPerManager();
        CriticalSectionChecker checker = new CriticalSectionChecker();
        List<String> invalidInside = new CopyOnWriteArrayList<>();

        Throwable workerFailure = TckFixture.failureOf(() -> TckFixture.runConcurrently(threads, i -> {
            LockManager m = ms.get(i % ms.size());
            LeaseOptions o = LeaseOptions.ttl(Duration.ofSeconds(30)).withOwner(owner("worker-" + i));
            for (int r = 0; r < rounds; r++) {
                Lease lease = track(m.acquire(k, contentionMaxWait(), o));
                checker.enter(lease.fencingToken());
                try {
                    if (!lease.isValid()) invalidInside.add("worker " + i + " round " + r + ": " + TckFixture.describe(lease));
                    checker.work();
                } finally {
                    checker.exit();
                }
                lease.release();
            }
            return null;
        }));

        TckFixture.assertContention("contention of " + threads + " workers on " + show(k), checker, fencing,
                threads * rounds, invalidInside, workerFailure);
    }

    @Test
    void racingTakeoverOfAbandonedLeaseHasOneWinner() throws Exception {
        LockManager a = newManager();
        String k = key("takeover-race");
        int racers = contentionManagers();
        List<LockManager> ms = new ArrayList<>();
        for (int i = 0; i < racers; i++) ms.add(newManager());
        long start = System.nanoTime();
        hold(a, k, abandoned("crashed"));
        List<Lease> winners = new CopyOnWriteArrayList<>();
        AtomicLong firstWinAt = new AtomicLong();
        long limit = takeoverLimit().toNanos();

        TckFixture.runConcurrently(racers, i -> {
            LeaseOptions o = longLease("racer-" + i);
            while (winners.isEmpty() && System.nanoTime() - start < limit) {
                Optional<Lease> l = tryTake(ms.get(i), k, o);
                if (l.isPresent()) {
                    firstWinAt.compareAndSet(0, System.nanoTime());
                    winners.add(l.get());
                } else {
                    TckFixture.pace(Duration.ofMillis(2));
                }
            }
            tryTake(ms.get(i), k, o).ifPresent(winners::add); // once someone won, nobody else may
            return null;
        });

        assertThat(winners).as("racers that took the abandoned lease").hasSize(1);
        assertThat(Duration.ofNanos(firstWinAt.get() - start))
                .as("time from the abandoned holder's acquire to the first racer's win (TTL %s)", shortTtl())
                .isGreaterThanOrEqualTo(shortTtl());
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(winners.get(0).leaseId());
    }

    // ---------------------------------------------------------------- other processes

    @Test
    void processesContendingOnOneKeyNeverOverlap(@TempDir Path work) throws Exception {
        String uri = requireProcessUri();
        boolean fencing = declares(newManager(), Capability.FENCING_TOKENS);
        MultiProcessContention.Report report = MultiProcessContention.run(uri, key("processes"),
                processContenders(), processRounds(), fencing, work, Duration.ofMinutes(5), childJvmArguments());
        assertThat(report.violations()).as("audit of %d processes x %d sections", processContenders(), processRounds())
                .isEmpty();
    }

    @Test
    void killedHolderProcessLosesTheLock(@TempDir Path work) throws Exception {
        String uri = requireProcessUri();
        LockManager a = newManager();
        boolean detects = declares(a, Capability.HOLDER_DEATH_DETECTION);
        // a store that notices dead holders must free the key long before the TTL; others at the TTL
        Duration wanted = detects ? Duration.ofMinutes(10) : shortTtl().multipliedBy(5);
        Duration ttl = wanted.compareTo(maxTtl()) > 0 ? maxTtl() : wanted;
        String k = key("killed-holder");
        MultiProcessContention.Holder holder = MultiProcessContention.startHolder(uri, k, ttl, work, childJvmArguments());
        try {
            assertThat(tryTake(a, k, longLease("heir"))).as("while the holder process lives").isEmpty();
            assertThat(a.inspect(k).map(LockInfo::fencingToken)).contains(holder.fencingToken());
        } finally {
            holder.process().destroyForcibly().waitFor();
        }
        long killed = System.nanoTime();
        Duration limit = detects ? GENEROUS : ttl.plus(takeoverLimit());
        Lease next = pollUntilAcquired(a, k, longLease("heir"), limit);
        if (!detects) {
            // the holder's last renewal was sent at most a heartbeat (TTL/3) before the kill
            assertThat(Duration.ofNanos(System.nanoTime() - killed))
                    .as("takeover after the holder was killed, without holder-death detection (TTL %s)", ttl)
                    .isGreaterThanOrEqualTo(ttl.multipliedBy(2).dividedBy(3));
        }
        if (declares(a, Capability.FENCING_TOKENS)) {
            assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
        }
    }

    private String requireProcessUri() {
        String uri = uriForOtherProcesses();
        Assumptions.assumeTrue(uri != null,
                "uriForOtherProcesses() is not overridden: multi-process test skipped (the store is not shared across processes)");
        return uri;
    }

    // ---------------------------------------------------------------- helpers

    /** Key unique to this test: {@code <tag>/<name>}. */
    protected final String key(String name) {
        return fx.key(name);
    }

    /** Fails the test as skipped, naming the capability, unless {@code manager} declares it. */
    protected static void requireCapability(LockManager manager, Capability capability) {
        Assumptions.assumeTrue(manager.capabilities().contains(capability),
                () -> manager.description() + " does not declare capability " + capability + ": test skipped");
    }

    private static boolean declares(LockManager manager, Capability capability) {
        return manager.capabilities().contains(capability);
    }

    private LockManager manager(LockContext context) throws Exception {
        return fx.track(newManager(context));
    }

    @Override
    public final LockManager managerForEvents(LockContext context) throws Exception {
        return manager(context);
    }

    @Override
    public final String keyForEvents(String name) {
        return key(name);
    }

    @Override
    public final Duration shortTtlForEvents() {
        return shortTtl();
    }

    private String owner(String role) {
        return fx.owner(role);
    }

    private LeaseOptions longLease(String role) {
        return LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner(owner(role));
    }

    /** A lease nobody renews: what a crashed holder leaves behind. */
    private LeaseOptions abandoned(String role) {
        return LeaseOptions.ttl(shortTtl()).withoutHeartbeat().withOwner(owner(role));
    }

    /**
     * TTL of leases that must stay alive through a whole test (renewed by hand or by heartbeat):
     * two short TTLs, so a heartbeat late by most of a short TTL (a loaded machine) still lands in time.
     */
    private Duration keepAliveTtl() {
        return shortTtl().multipliedBy(2);
    }

    private Duration pollInterval() {
        return Duration.ofMillis(Math.max(5, shortTtl().toMillis() / 50));
    }

    /** How long a contender may poll for an abandoned lease before the test fails. */
    private Duration takeoverLimit() {
        return shortTtl().multipliedBy(10).plus(GENEROUS);
    }

    private Lease track(Lease lease) {
        return fx.track(lease);
    }

    private Optional<Lease> track(Optional<Lease> lease) {
        return fx.track(lease);
    }

    private Optional<Lease> tryTake(LockManager m, String k, LeaseOptions o) {
        return fx.tryTake(m, k, o);
    }

    /** A tryAcquire that must succeed. */
    private Lease hold(LockManager m, String k, LeaseOptions o) {
        return fx.hold(m, k, o);
    }

    /** Polls tryAcquire until it succeeds; fails after {@code limit}. */
    private Lease pollUntilAcquired(LockManager m, String k, LeaseOptions o, Duration limit) throws InterruptedException {
        return fx.pollUntilAcquired(m, k, o, limit, pollInterval());
    }

    /** The lease's token, after checking that {@code other} sees the same one through inspect. */
    private static long checkedToken(LockManager other, Lease lease) {
        assertThat(other.inspect(lease.key()).map(LockInfo::fencingToken))
                .as("inspect's token for %s", lease.owner()).contains(lease.fencingToken());
        return lease.fencingToken();
    }


    private interface Check {
        String run() throws Exception;
    }

    /** Runs one per-key check, collecting a readable failure instead of stopping at the first. */
    private static void check(List<String> failures, String k, String step, Check check) {
        try {
            String problem = check.run();
            if (problem != null) failures.add(show(k) + " — " + step + ": " + problem);
        } catch (Exception | AssertionError e) {
            failures.add(show(k) + " — " + step + " threw " + e);
        }
    }

    static String show(String k) {
        return TckFixture.show(k);
    }
}
