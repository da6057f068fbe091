package dev.latchkey.tck;


import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

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
 * abandoned lease after its TTL and never before, a lease held while no thread can start (lost by
 * its deadline, before anyone else holds the key) or only for a while (it survives), force release (the broken holder's renew and
 * release raise {@link LeaseLostException} without disturbing the new holder), lease-loss
 * listeners, the events a {@link dev.latchkey.LockListener} sees, fencing-token order, hostile and invalid keys, that the manager
 * uses the {@link LockContext} it was built with, that a client whose wall clock is an hour off takes
 * nothing early, and — given {@link #uriForOtherProcesses()} — exclusion across
 * JVMs and the fate of a lock whose holder process was killed. Declared capabilities are held to
 * their word: {@code FENCING_TOKENS} (token order), {@code LIST}, {@code SERVER_SIDE_EXPIRY} (a
 * contender needs neither a watch of its own nor a right clock; given {@link #serverClock()}, a step of
 * the server's clock keeps the documented bound), {@code NATIVE_WAIT} (given
 * {@link #newManagerPollingEvery}: a waiter is woken long before its poll), {@code HOLDER_DEATH_DETECTION}
 * (a killed holder's lock is freed long before its TTL). Tests of an undeclared {@link Capability} are
 * skipped through JUnit assumptions that name the capability.
 *
 * <p><b>Hooks.</b> Required: {@link #newManager(LockContext)}, nothing else. Each other hook has a
 * default that runs the contract; override one to fit a slow store or to switch on the tests that
 * need it:
 * <ul>
 *   <li>time: {@link #shortTtl()} (default 1 s), {@link #maxTtl()}, {@link #serverClockTtl()};</li>
 *   <li>contention: {@link #contentionManagers()}, {@link #contentionThreadsPerManager()},
 *       {@link #contentionRounds()}, {@link #contentionMaxWait()};</li>
 *   <li>other JVMs (tests skipped without the first): {@link #uriForOtherProcesses()},
 *       {@link #childJvmArguments()}, {@link #processContenders()}, {@link #processRounds()};</li>
 *   <li>declared capabilities (tests skipped, naming the hook, without it): {@link #serverClock()}
 *       for {@code SERVER_SIDE_EXPIRY}, {@link #newManagerPollingEvery} for {@code NATIVE_WAIT};</li>
 *   <li>{@link #otherConfigurations()}: other spellings of the same locks that must exclude each
 *       other (test skipped without one).</li>
 * </ul>
 * The kit's other contracts need as little: {@link ConditionalStoreContract} and
 * {@link StoreFaultContract} one store factory, {@link NetworkFaultContract} the server's URI and address.
 *
 * <p><b>Timing</b>: every time-based test asserts orderings measured on the monotonic clock
 * ("the contender's success came at least a TTL after the holder started acquiring"), never an
 * upper bound tighter than many seconds, so a loaded machine slows the run but does not fail it.
 * Tune with {@link #shortTtl()} and the contention hooks for slow stores.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
public abstract class LockManagerContract {

    private static final Duration GENEROUS = TckFixture.GENEROUS;

    /** Per test: a random tag (keys never collide across tests or runs on a shared store), cleanup. */
    final TckFixture fx = new TckFixture();

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
     * example take it, or a {@code ConditionalStoreLockManager} built with {@code maxPoll = poll}. The test asks for a
     * poll of 40 s and fails unless a waiter gets the
     * released key within half of it, so only a wake-up by the store passes. (A {@code ConditionalStoreLockManager}'s
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

    /**
     * For the server-clock tests of a backend declaring {@link Capability#SERVER_SIDE_EXPIRY}: a
     * server whose clock the kit can step, and managers on it ({@link ServerClock}). Default
     * {@code null}: those tests are skipped, naming this hook, so a backend that declares the
     * capability shows in the report that its bound under a clock step went untested; return
     * {@link ServerClock#notSteppable(String)} to say why it cannot be.
     */
    protected ServerClock serverClock() throws Exception {
        return null;
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
        basicsChecks().singleHolder();
    }

    @Test
    void ownerAndMetadataRoundTripThroughInspect() throws Exception {
        basicsChecks().ownerAndMetadataRoundTripThroughInspect();
    }

    @Test
    void racingTryAcquireOnOneManagerHasOneWinner() throws Exception {
        basicsChecks().racingTryAcquireOnOneManagerHasOneWinner();
    }

    @Test
    void twoKeysAreIndependent() throws Exception {
        basicsChecks().twoKeysAreIndependent();
    }

    @Test
    void releaseThenReacquire() throws Exception {
        basicsChecks().releaseThenReacquire();
    }

    @Test
    void inspectOfFreeKeyIsEmpty() throws Exception {
        basicsChecks().inspectOfFreeKeyIsEmpty();
    }

    @Test
    void tryAcquireNeverWaits() throws Exception {
        basicsChecks().tryAcquireNeverWaits();
    }

    @Test
    void acquireTimesOutNamingTheHolder() throws Exception {
        basicsChecks().acquireTimesOutNamingTheHolder();
    }

    @Test
    void acquireWaitsForRelease() throws Exception {
        basicsChecks().acquireWaitsForRelease();
    }

    // ---------------------------------------------------------------- listeners

    @Test
    void listenerSeesAcquiredThenReleasedOffTheCallersThread() throws Exception {
        listenerChecks().listenerSeesAcquiredThenReleasedOffTheCallersThread();
    }

    @Test
    void listenerSeesBusyOnAHeldKey() throws Exception {
        listenerChecks().listenerSeesBusyOnAHeldKey();
    }

    @Test
    void listenerSeesAnUnrenewedLeaseExpire() throws Exception {
        listenerChecks().listenerSeesAnUnrenewedLeaseExpire();
    }

    @Test
    void listenerSeesALossByForceReleaseWithItsReason() throws Exception {
        listenerChecks().listenerSeesALossByForceReleaseWithItsReason();
    }

    @Test
    void listenerSeesALossByTakeoverWithAReasonThatAdmitsIt() throws Exception {
        listenerChecks().listenerSeesALossByTakeoverWithAReasonThatAdmitsIt();
    }

    @Test
    void throwingOrBlockingListenersBreakNoLease() throws Exception {
        listenerChecks().throwingOrBlockingListenersBreakNoLease();
    }

    // ---------------------------------------------------------------- renew, heartbeat, expiry

    @Test
    void renewKeepsLeasePastItsTtl() throws Exception {
        expiryChecks().renewKeepsLeasePastItsTtl();
    }

    @Test
    void heartbeatKeepsLeaseAliveUnattended() throws Exception {
        expiryChecks().heartbeatKeepsLeaseAliveUnattended();
    }

    @Test
    void abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore() throws Exception {
        expiryChecks().abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore();
    }

    @Test
    void lostListenerFiresWhenBrokenWhileHeartbeating() throws Exception {
        expiryChecks().lostListenerFiresWhenBrokenWhileHeartbeating();
    }

    @Test
    void lostListenerFiresWhenAbandonedLeaseRunsOut() throws Exception {
        expiryChecks().lostListenerFiresWhenAbandonedLeaseRunsOut();
    }

    @Test
    void lostListenerIsNotCalledOnRelease() throws Exception {
        expiryChecks().lostListenerIsNotCalledOnRelease();
    }

    // ---------------------------------------------------------------- renew with a new TTL

    /** After {@code renew(longer)} the key stays held past the old TTL with no renewal ({@link TtlChangeChecks}). About 2.5 short TTLs. */
    @Test
    void renewWithLongerTtlHoldsPastTheOldTtl() throws Exception {
        ttlChangeChecks().renewWithLongerTtlHoldsPastTheOldTtl();
    }

    /** After {@code renew(shorter)} another holder gets the key after the shorter TTL, before the old one. About one short TTL. */
    @Test
    void renewWithShorterTtlFreesTheKeySooner() throws Exception {
        ttlChangeChecks().renewWithShorterTtlFreesTheKeySooner();
    }

    /** After {@code release(keepFor)} the key stays taken that long, then frees ({@link TtlChangeChecks}). About one short TTL. */
    @Test
    void releaseKeepingTheKeyHoldsItThatLong() throws Exception {
        ttlChangeChecks().releaseKeepingTheKeyHoldsItThatLong();
    }

    @Test
    void renewWithTheSameTtlIsRenew() throws Exception {
        ttlChangeChecks().renewWithTheSameTtlIsRenew();
    }

    // ---------------------------------------------------------------- thread limit

    /**
     * No thread can start for the holder's manager (its context's factory fails as the JDK does at
     * a thread limit): its lease is still lost by its deadline, with
     * {@link LeaseLostException.Reason#NO_RENEWER_THREAD}, and its {@code onLost} fires before anyone
     * else holds the key ({@link ThreadLimitChecks}). About one TTL.
     */
    @Test
    void leaseHeldWhileNoThreadCanStartIsLostBeforeAnyoneElseHoldsIt() throws Exception {
        threadLimitChecks().leaseHeldWhileNoThreadCanStartIsLostBeforeAnyoneElseHoldsIt();
    }

    /** Thread starts refused until half the lease's TTL: the lease renews and survives. About six short TTLs. */
    @Test
    void leaseRenewsOnceThreadsCanStartAgain() throws Exception {
        threadLimitChecks().leaseRenewsOnceThreadsCanStartAgain();
    }

    // ---------------------------------------------------------------- force release

    @Test
    void forceReleaseBreaksTheHolderWithoutDisturbingTheNext() throws Exception {
        forceReleaseChecks().forceReleaseBreaksTheHolderWithoutDisturbingTheNext();
    }

    @Test
    void brokenHolderCannotReleaseTheFreedKey() throws Exception {
        forceReleaseChecks().brokenHolderCannotReleaseTheFreedKey();
    }

    @Test
    void forceReleaseOfALeaseIdBreaksThatLeaseAndNoOther() throws Exception {
        forceReleaseChecks().forceReleaseOfALeaseIdBreaksThatLeaseAndNoOther();
    }

    @Test
    void clientsConfiguredDifferentlyNeverBothHold() throws Exception {
        forceReleaseChecks().clientsConfiguredDifferentlyNeverBothHold();
    }

    @Test
    void forceReleaseOfFreeKeyReturnsFalse() throws Exception {
        forceReleaseChecks().forceReleaseOfFreeKeyReturnsFalse();
    }

    // ---------------------------------------------------------------- fencing

    @Test
    void fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease() throws Exception {
        fencingChecks().fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease();
    }

    // ---------------------------------------------------------------- keys

    @Test
    void hostileKeysLockIndependentlyAndRoundTrip() throws Exception {
        keyChecks().hostileKeysLockIndependentlyAndRoundTrip();
    }

    @Test
    void invalidKeysAreRefusedBeforeAnyIo() throws Exception {
        keyChecks().invalidKeysAreRefusedBeforeAnyIo();
    }

    @Test
    void listByPrefix() throws Exception {
        keyChecks().listByPrefix();
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
        clockChecks().managerUsesTheContextItWasGiven();
    }

    /**
     * A wall clock an hour ahead or behind, on the holder or on the contender: nothing is taken
     * before the TTL has passed by the store's judgement, and a heartbeating lease is never taken.
     * The four cases run at once on their own keys and managers (each waits out a TTL or more;
     * in a row they would take four times as long), and every case's failure is reported.
     */
    @Test
    void skewedWallClockTakesNothingEarly() throws Exception {
        clockChecks().skewedWallClockTakesNothingEarly();
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
     * {@link Capability#SERVER_SIDE_EXPIRY} under a step of the server's clock forward by
     * {@value ServerClockChecks#STEP_TTLS} TTLs: a contender may get in (the documented cost), with a
     * greater token; the old holder learns it at its next renewal as {@code TAKEN_OVER}, and its release
     * leaves the new holder alone ({@link ServerClockChecks}). Needs {@link #serverClock()}. About a third of {@link #serverClockTtl()}.
     */
    @Test
    void serverClockStepForwardKeepsTheDocumentedBound() throws Exception {
        serverClockChecks().stepForward();
    }

    /** A step of the server's clock back only delays expiry: the holder keeps, renews and releases the key. About two thirds of {@link #serverClockTtl()}. */
    @Test
    void serverClockStepBackOnlyDelaysExpiry() throws Exception {
        serverClockChecks().stepBack();
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

    // ---------------------------------------------------------------- contention

    /**
     * One contention test at a time in a JVM: eight acquiring threads each, and two of them at once
     * (two routes of one backend, run concurrently) slowed a loaded 2-core machine past a request's
     * bound in CI-like runs.
     */
    @Test
    @ResourceLock("dev.latchkey.tck.contention")
    void contentionKeepsCriticalSectionsApart() throws Exception {
        contentionChecks().contentionKeepsCriticalSectionsApart();
    }

    @Test
    void racingTakeoverOfAbandonedLeaseHasOneWinner() throws Exception {
        contentionChecks().racingTakeoverOfAbandonedLeaseHasOneWinner();
    }

    // ---------------------------------------------------------------- other processes

    @Test
    void processesContendingOnOneKeyNeverOverlap(@TempDir Path work) throws Exception {
        contentionChecks().processesContendingOnOneKeyNeverOverlap(work);
    }

    @Test
    void killedHolderProcessLosesTheLock(@TempDir Path work) throws Exception {
        contentionChecks().killedHolderProcessLosesTheLock(work);
    }

    // ---------------------------------------------------------------- helpers

    // the tests of each concern live in their own class; each gets this contract's hooks and helpers
    private BasicsChecks basicsChecks() {
        return new BasicsChecks(this);
    }

    private ListenerChecks listenerChecks() {
        return new ListenerChecks(this);
    }

    private FencingChecks fencingChecks() {
        return new FencingChecks(this);
    }

    private ExpiryChecks expiryChecks() {
        return new ExpiryChecks(this);
    }

    private TtlChangeChecks ttlChangeChecks() {
        return new TtlChangeChecks(this);
    }

    private ThreadLimitChecks threadLimitChecks() {
        return new ThreadLimitChecks(this);
    }

    private ForceReleaseChecks forceReleaseChecks() {
        return new ForceReleaseChecks(this);
    }

    private KeyChecks keyChecks() {
        return new KeyChecks(this);
    }

    private ClockChecks clockChecks() {
        return new ClockChecks(this);
    }

    private ContentionChecks contentionChecks() {
        return new ContentionChecks(this);
    }

    /** The server-clock tests' checks, after their capability and hook are seen to be there (else skipped, naming them). */
    private ServerClockChecks serverClockChecks() throws Exception {
        requireCapability(newManager(), Capability.SERVER_SIDE_EXPIRY);
        ServerClock clock = serverClock();
        Assumptions.assumeTrue(clock != null, "SERVER_SIDE_EXPIRY is declared, but serverClock() is not overridden:"
                + " the kit cannot step the server's clock, so the backend's bound under a clock step is untested; test skipped");
        Assumptions.assumeFalse(clock instanceof ServerClock.NotSteppable, () -> "SERVER_SIDE_EXPIRY is declared, but"
                + " the server's clock cannot be stepped: " + ((ServerClock.NotSteppable) clock).why() + "; test skipped");
        return new ServerClockChecks(fx, clock, serverClockTtl(), pollInterval());
    }

    /**
     * The holder's TTL in the server-clock tests: ten short TTLs (at most {@link #maxTtl()}), so its
     * heartbeat, a third of it, does not renew on the stepped clock before a contender looks.
     */
    protected Duration serverClockTtl() {
        Duration ten = shortTtl().multipliedBy(10);
        return ten.compareTo(maxTtl()) > 0 ? maxTtl() : ten;
    }

    private CapabilityChecks capabilityChecks() {
        return new CapabilityChecks(fx, this::manager, shortTtl(), pollInterval(), takeoverLimit());
    }

    /** Key unique to this test: {@code <tag>/<name>}. */
    protected final String key(String name) {
        return fx.key(name);
    }

    /** Fails the test as skipped, naming the capability, unless {@code manager} declares it. */
    protected static void requireCapability(LockManager manager, Capability capability) {
        Assumptions.assumeTrue(manager.capabilities().contains(capability),
                () -> manager.description() + " does not declare capability " + capability + ": test skipped");
    }

    static boolean declares(LockManager manager, Capability capability) {
        return manager.capabilities().contains(capability);
    }

    LockManager manager(LockContext context) throws Exception {
        return fx.track(newManager(context));
    }

    String owner(String role) {
        return fx.owner(role);
    }

    LeaseOptions longLease(String role) {
        return LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner(owner(role));
    }

    /** A lease nobody renews: what a crashed holder leaves behind. */
    LeaseOptions abandoned(String role) {
        return LeaseOptions.ttl(shortTtl()).withoutHeartbeat().withOwner(owner(role));
    }

    /**
     * TTL of leases that must stay alive through a whole test (renewed by hand or by heartbeat):
     * two short TTLs, so a heartbeat late by most of a short TTL (a loaded machine) still lands in time.
     */
    Duration keepAliveTtl() {
        return shortTtl().multipliedBy(2);
    }

    Duration pollInterval() {
        return Duration.ofMillis(Math.max(5, shortTtl().toMillis() / 50));
    }

    /** How long a contender may poll for an abandoned lease before the test fails. */
    Duration takeoverLimit() {
        return shortTtl().multipliedBy(10).plus(GENEROUS);
    }

    Lease track(Lease lease) {
        return fx.track(lease);
    }

    Optional<Lease> track(Optional<Lease> lease) {
        return fx.track(lease);
    }

    Optional<Lease> tryTake(LockManager m, String k, LeaseOptions o) {
        return fx.tryTake(m, k, o);
    }

    /** A tryAcquire that must succeed. */
    Lease hold(LockManager m, String k, LeaseOptions o) {
        return fx.hold(m, k, o);
    }

    /** Polls tryAcquire until it succeeds; fails after {@code limit}. */
    Lease pollUntilAcquired(LockManager m, String k, LeaseOptions o, Duration limit) throws InterruptedException {
        return fx.pollUntilAcquired(m, k, o, limit, pollInterval());
    }



    static String show(String k) {
        return TckFixture.show(k);
    }
}
