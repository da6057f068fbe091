package dev.latchkey.tck;

import static dev.latchkey.tck.KitRun.assertFailedOn;
import static dev.latchkey.tck.KitRun.describe;
import static dev.latchkey.tck.KitRun.failures;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests of the TCK itself: a kit that passes every backend is worthless, so each check here runs
 * contract tests against a backend with one classic bug ({@link BrokenBackends}) and asserts that
 * they fail — and that the audit of the multi-process log flags overlaps it is shown.
 */
class TckSelfTest {

    // The broken contracts are nested, so Surefire (which skips classes with '$') never runs them directly.

    static class RacyStoreCas extends ConditionalStoreContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected ConditionalStore newStore() {
            return new BrokenBackends.RacyStore(backing);
        }

        @Override protected int raceRounds() {
            return 10;
        }
    }

    static class LookThenDeleteCas extends ConditionalStoreContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected ConditionalStore newStore() {
            return new BrokenBackends.LookThenDeleteStore(backing);
        }

        @Override protected int raceRounds() {
            return 10;
        }
    }

    static class RestartingVersionsCas extends ConditionalStoreContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected ConditionalStore newStore() {
            return BrokenBackends.VersionRuleStore.restartingCounter(backing);
        }
    }

    static class MillisecondVersionsCas extends ConditionalStoreContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected ConditionalStore newStore() {
            return BrokenBackends.VersionRuleStore.millisecondStamps(backing);
        }
    }

    static class PerClientCounterCas extends ConditionalStoreContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected ConditionalStore newStore() {
            return BrokenBackends.VersionRuleStore.perClientCounter(backing);
        }
    }

    static class RacyStoreLocks extends LockManagerContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected LockManager newManager(LockContext context) {
            return new ConditionalStoreLockManager(new BrokenBackends.RacyStore(backing), context, Set.of());
        }

        @Override protected int contentionRounds() {
            return 10;
        }
    }

    static class EarlyExpiryLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return BrokenBackends.earlyExpiry(name, context);
        }
    }

    static class WallClockLocks extends LockManagerContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected LockManager newManager(LockContext context) {
            return new ConditionalStoreLockManager(new BrokenBackends.WallClockAgeStore(backing, context.time()), context, Set.of());
        }
    }

    static class ConstantTokenLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return BrokenBackends.constantToken(Latchkey.open("mem://" + name, context));
        }
    }

    static class LocalTtlChangeLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return BrokenBackends.localTtlChange(Latchkey.open("mem://" + name, context));
        }
    }

    static class DoubleGrantLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return BrokenBackends.doubleGrant(Latchkey.open("mem://" + name, context));
        }

        @Override protected int contentionRounds() {
            return 5;
        }
    }

    static class IgnoredContextLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return Latchkey.open("mem://" + name); // the context is dropped: the system clocks instead
        }
    }

    static class LocalWatchClaimingServerExpiryLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return BrokenBackends.localWatchClaimingServerExpiry(name, context);
        }
    }

    static class ClockStepReadAsForceReleaseLocks extends LockManagerContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();
        final ForceReleaseForEveryLoss.SteppedServerTime server = new ForceReleaseForEveryLoss.SteppedServerTime();

        @Override protected LockManager newManager(LockContext context) {
            return ForceReleaseForEveryLoss.open(backing, server, context);
        }

        @Override protected ServerClock serverClock() {
            return ForceReleaseForEveryLoss.serverClock(backing, server);
        }

        @Override protected Duration serverClockTtl() {
            return Duration.ofSeconds(3); // an in-memory store: a heartbeat of 1 s is plenty
        }
    }

    static class PollingOnlyLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return Latchkey.open("mem://" + name, context);
        }

        @Override protected LockManager newManagerPollingEvery(Duration poll, LockContext context) {
            return BrokenBackends.pollingOnly(newManager(context), poll);
        }
    }

    static class OldLeaseTimerLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return context.threadFactory().isPresent()
                    ? new OldLeaseTimer(Latchkey.open("mem://" + name, context), context)
                    : Latchkey.open("mem://" + name, context); // the contenders
        }
    }

    static class NaiveEngineFaults extends StoreFaultContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected ConditionalStore newStore() {
            return MemConditionalStore.named(name);
        }

        @Override protected LockManager newManager(ConditionalStore store, LockContext context) {
            return new NaiveEngine(store);
        }
    }

    static class SlowReplyFreesTheKey extends NetworkFaultContract {
        static final SessionLocks.Server SERVER = startServer();

        private static SessionLocks.Server startServer() {
            try {
                return new SessionLocks.Server();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override protected String serverUri() {
            return "session://127.0.0.1:" + SERVER.address().getPort() + "/?timeout=1s";
        }

        @Override protected InetSocketAddress server() {
            return SERVER.address();
        }

        @Override protected LockManager open(String uri, LockContext context) {
            return new SessionLocks.Manager(uri, context);
        }
    }

    static class SlowReplyEndsTheSession extends SlowReplyFreesTheKey {
        @Override protected String serverUri() {
            return super.serverUri() + "&onTimeout=lost";
        }
    }

    @Test
    void casContractCatchesNonAtomicCreateAndReplace() {
        Map<String, Throwable> failed = failures(RacyStoreCas.class,
                "racingCreatesHaveExactlyOneWinner", "racingReplacesOfOneVersionHaveExactlyOneWinner",
                "createReadReplaceDelete");
        assertThat(failed).containsOnlyKeys("racingCreatesHaveExactlyOneWinner",
                "racingReplacesOfOneVersionHaveExactlyOneWinner");
        assertFailedOn(failed, "racingCreatesHaveExactlyOneWinner", "racing creates that did not have exactly one winner");
        assertFailedOn(failed, "racingReplacesOfOneVersionHaveExactlyOneWinner",
                "racing replaces that did not have exactly one winner");
    }

    @Test
    void casContractCatchesADeleteThatLooksFirst() {
        // every sequential check passes: the look refuses stale versions; only the race shows the unconditional delete
        Map<String, Throwable> failed = failures(LookThenDeleteCas.class,
                "racingDeleteNeverRemovesAReplacedRecord", "createReadReplaceDelete", "versionsOfANameNeverRepeat");
        assertThat(failed).containsOnlyKeys("racingDeleteNeverRemovesAReplacedRecord");
        assertFailedOn(failed, "racingDeleteNeverRemovesAReplacedRecord", "the delete removed the replaced record");
    }

    @Test
    void casContractCatchesVersionsThatRestartAfterADelete() {
        Map<String, Throwable> failed = failures(RestartingVersionsCas.class,
                "createReadReplaceDelete", "versionsOfANameNeverRepeat");
        assertFailedOn(failed, "createReadReplaceDelete", "version from before the delete");
        assertFailedOn(failed, "versionsOfANameNeverRepeat", "versions given twice to one name");
    }

    @Test
    void casContractCatchesVersionsStampedInMilliseconds() {
        // not by luck: the writes go on until 64 fit in 32 ms, so two of them share a millisecond
        Map<String, Throwable> failed = failures(MillisecondVersionsCas.class, "versionsOfANameNeverRepeat");
        assertFailedOn(failed, "versionsOfANameNeverRepeat", "versions given twice to one name");
    }

    @Test
    void casContractCatchesVersionsCountedPerClient() {
        Map<String, Throwable> failed = failures(PerClientCounterCas.class, "versionsOfANameNeverRepeat");
        assertFailedOn(failed, "versionsOfANameNeverRepeat", "versions given twice to one name");
    }

    @Test
    void lockContractCatchesTwoHoldersFromARacyStore() {
        Map<String, Throwable> failed = failures(RacyStoreLocks.class,
                "contentionKeepsCriticalSectionsApart", "racingTryAcquireOnOneManagerHasOneWinner");
        assertThat(failed).containsOnlyKeys("contentionKeepsCriticalSectionsApart", "racingTryAcquireOnOneManagerHasOneWinner");
        assertFailedOn(failed, "racingTryAcquireOnOneManagerHasOneWinner", "threads of one manager racing tryAcquire");
        // the checker's verdict, also when a worker's release found the record overwritten: a
        // worker's failure is reported beside it, never instead of it. Two holders show as sections
        // that overlap or, when the race let them take turns, as one token granted twice
        assertThat(failed.get("contentionKeepsCriticalSectionsApart").getMessage())
                .as("why the contention test failed on a racy store")
                .containsAnyOf("overlapping critical sections", "fencing tokens in order of entry");
    }

    @Test
    void lockContractsOverlapCheckerCatchesADoubleGrantNoReleaseCanNotice() {
        Map<String, Throwable> failed = failures(DoubleGrantLocks.class, "contentionKeepsCriticalSectionsApart");
        assertFailedOn(failed, "contentionKeepsCriticalSectionsApart", "overlapping critical sections");
    }

    @Test
    void lockContractCatchesATtlChangeOrAKeepThatNeverReachesTheStore() {
        Map<String, Throwable> failed = failures(LocalTtlChangeLocks.class,
                "renewWithLongerTtlHoldsPastTheOldTtl", "renewWithShorterTtlFreesTheKeySooner", "releaseKeepingTheKeyHoldsItThatLong");
        assertFailedOn(failed, "releaseKeepingTheKeyHoldsItThatLong", "contender");
        // the store's TTL, seen by inspect where it reports one, else by a contender that gets in
        assertThat(failed).containsKey("renewWithLongerTtlHoldsPastTheOldTtl");
        assertThat(describe(failed.get("renewWithLongerTtlHoldsPastTheOldTtl"))).as("why renewWithLongerTtlHoldsPastTheOldTtl failed")
                .containsAnyOf("inspect's expiresAt after renew(", "contender");
        assertFailedOn(failed, "renewWithShorterTtlFreesTheKeySooner", "after renew(");
    }

    @Test
    void lockContractCatchesAManagerThatIgnoresItsContext() {
        Map<String, Throwable> failed = failures(IgnoredContextLocks.class, "managerUsesTheContextItWasGiven");
        assertFailedOn(failed, "managerUsesTheContextItWasGiven", "must build the manager with the context it was given");
    }

    @Test
    void lockContractCatchesTakeoverBeforeTheTtl() {
        Map<String, Throwable> failed = failures(EarlyExpiryLocks.class,
                "abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore", "racingTakeoverOfAbandonedLeaseHasOneWinner");
        assertFailedOn(failed, "abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore", "to the contender's takeover");
        assertFailedOn(failed, "racingTakeoverOfAbandonedLeaseHasOneWinner", "to the first racer's win");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // waits out real time (20-40 s): beside the other cases, not after them
    void lockContractCatchesExpiryJudgedByWallClocks() {
        // contender an hour ahead, holder an hour behind: both make the lease look old
        Map<String, Throwable> failed = failures(WallClockLocks.class, "skewedWallClockTakesNothingEarly");
        assertThat(failed).as("contract tests that failed").containsKey("skewedWallClockTakesNothingEarly");
        String why = describe(failed.get("skewedWallClockTakesNothingEarly"));
        for (String skewed : List.of("wall clock PT1H ahead on the contender: ", "wall clock PT1H behind on the holder: ")) {
            assertThat(why).as("why the skew test failed").containsPattern(Pattern.quote(skewed)
                    + "[^\n]*(takeover of the abandoned lease after|contender on a heartbeating lease)");
        }
    }

    @Test
    void lockContractCatchesServerSideExpiryJudgedByALocalWatch() {
        Map<String, Throwable> failed = failures(LocalWatchClaimingServerExpiryLocks.class,
                "serverSideExpiryNeedsNoWatchAndNoClockOfTheContender");
        // both cases, each for its own reason
        assertFailedOn(failed, "serverSideExpiryNeedsNoWatchAndNoClockOfTheContender",
                "by watching the record for a TTL on the contender's own clock");
        assertFailedOn(failed, "serverSideExpiryNeedsNoWatchAndNoClockOfTheContender",
                "whose monotonic clock runs 4 times too fast took over");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // waits for a heartbeat (a few seconds): beside the other cases
    void lockContractCatchesAServerClockStepReportedAsAForceRelease() {
        Map<String, Throwable> failed = failures(ClockStepReadAsForceReleaseLocks.class,
                "serverClockStepForwardKeepsTheDocumentedBound", "serverClockStepBackOnlyDelaysExpiry");
        assertThat(failed).containsOnlyKeys("serverClockStepForwardKeepsTheDocumentedBound");
        assertFailedOn(failed, "serverClockStepForwardKeepsTheDocumentedBound",
                "the old holder's loss reason after a server-clock step");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // waits out real time (20-40 s): beside the other cases, not after them
    void lockContractCatchesNativeWaitThatOnlyPolls() {
        Map<String, Throwable> failed = failures(PollingOnlyLocks.class, "nativeWaitWakesAWaiterLongBeforeItsPoll");
        assertFailedOn(failed, "nativeWaitWakesAWaiterLongBeforeItsPoll", "the store did not wake it");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // waits out real time (a few seconds): beside the other cases
    void lockContractCatchesALeaseTimerThatAThreadLimitStops() {
        Map<String, Throwable> failed = failures(OldLeaseTimerLocks.class,
                "leaseHeldWhileNoThreadCanStartIsLostBeforeAnyoneElseHoldsIt", "leaseRenewsOnceThreadsCanStartAgain");
        // the old timer's lease never fires onLost before the contender is in; on a loaded machine its
        // last renewal may instead land late enough to be lost as EXPIRED: caught by the reason then
        assertThat(failed).containsKey("leaseHeldWhileNoThreadCanStartIsLostBeforeAnyoneElseHoldsIt");
        assertThat(describe(failed.get("leaseHeldWhileNoThreadCanStartIsLostBeforeAnyoneElseHoldsIt")))
                .as("why leaseHeldWhileNoThreadCanStartIsLostBeforeAnyoneElseHoldsIt failed")
                .containsAnyOf("the holder's loss listener had fired when the contender got the key",
                        "reason of the loss of a lease no renewer thread could be started for");
        assertFailedOn(failed, "leaseRenewsOnceThreadsCanStartAgain", "whose thread starts were refused for its first");
    }

    @Test
    void lockContractCatchesFencingTokensThatDoNotIncrease() {
        Map<String, Throwable> failed = failures(ConstantTokenLocks.class,
                "fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease", "contentionKeepsCriticalSectionsApart");
        assertFailedOn(failed, "fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease", "fencing tokens of successive holders");
        assertFailedOn(failed, "contentionKeepsCriticalSectionsApart", "fencing tokens in order of entry");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT) // waits out real time (20-40 s): beside the other cases, not after them
    void faultContractCatchesRenewalsTakenOnFaithPhantomClaimsAndASharedRenewer() {
        Map<String, Throwable> failed = failures(NaiveEngineFaults.class,
                "renewalWhoseReplyWasLostNeverOutlivesTheStoresExpiry",
                "renewalTheStoreRefusedWithoutWritingExtendsNothing", "claimWhoseReplyWasLostLeavesNoPhantomHolder",
                "hungRenewalDelaysNeitherLossSignalsNorOtherManagers",
                "renewalWhoseRetryFoundItsOwnFirstAttemptKeepsTheLease");
        assertThat(failed).doesNotContainKey("renewalWhoseRetryFoundItsOwnFirstAttemptKeepsTheLease");
        assertFailedOn(failed, "renewalWhoseReplyWasLostNeverOutlivesTheStoresExpiry", "two valid leases");
        assertFailedOn(failed, "renewalTheStoreRefusedWithoutWritingExtendsNothing", "two valid leases");
        assertFailedOn(failed, "claimWhoseReplyWasLostLeavesNoPhantomHolder", "phantom holder after a create");
        assertFailedOn(failed, "hungRenewalDelaysNeitherLossSignalsNorOtherManagers", "another manager's lease was lost");
    }

    @Test
    void networkFaultContractCatchesAKeyFreedWhenAReplyIsLaterThanTheRequestTimeout() {
        Map<String, Throwable> failed = failures(SlowReplyFreesTheKey.class,
                "replySlowerThanTheRequestTimeoutNeverFreesTheKeyUnderAValidLease");
        assertFailedOn(failed, "replySlowerThanTheRequestTimeoutNeverFreesTheKeyUnderAValidLease",
                "still valid when the contender got the key");
    }

    @Test
    void networkFaultContractCatchesAKeyFreedEarlyWithTheLossReportedFirst() {
        Map<String, Throwable> failed = failures(SlowReplyEndsTheSession.class,
                "replySlowerThanTheRequestTimeoutNeverFreesTheKeyUnderAValidLease");
        assertFailedOn(failed, "replySlowerThanTheRequestTimeoutNeverFreesTheKeyUnderAValidLease",
                "before its lease could have run out");
    }

    @Test
    void multiProcessAuditFlagsOverlapsLostUpdatesAndTokenOrder(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("log");
        Path counter = dir.resolve("counter");
        Files.writeString(counter, "3");
        Files.write(log, List.of("enter 1 0 1 a", "exit 1 0 1 a", "enter 2 0 2 b", "exit 2 0 2 b",
                "enter 1 1 3 c", "exit 1 1 3 c"));
        assertThat(MultiProcessContention.audit(log, counter, 2, 3, true, new ArrayList<>()).violations()).isEmpty();

        Files.write(log, List.of("enter 1 0 1 a", "enter 2 0 2 b", "exit 1 0 1 a", "exit 2 0 2 b",
                "enter 1 1 2 c", "exit 1 1 2 c"));
        Files.writeString(counter, "2");
        List<String> v = MultiProcessContention.audit(log, counter, 2, 3, true, new ArrayList<>()).violations();
        assertThat(v).anyMatch(s -> s.contains("while 1 0 1 a was inside"))
                .anyMatch(s -> s.contains("token 2 after 2"))
                .anyMatch(s -> s.contains("lost updates"));

        // ten sections, one hand-over: blocks, not a race
        List<String> blocks = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String id = (i < 5 ? "1 " : "2 ") + i + " " + (i + 1) + " x" + i;
            blocks.add("enter " + id);
            blocks.add("exit " + id);
        }
        Files.write(log, blocks);
        Files.writeString(counter, "10");
        MultiProcessContention.Report inBlocks = MultiProcessContention.audit(log, counter, 2, 10, true, new ArrayList<>());
        assertThat(inBlocks.violations()).anyMatch(s -> s.contains("only 1 hand-overs"));
        assertThat(MultiProcessContention.racedTooLittle(inBlocks)).as("a run to repeat, nothing else wrong").isTrue();
        assertThat(MultiProcessContention.racedTooLittle(MultiProcessContention.audit(log, counter, 2, 11, true, new ArrayList<>())))
                .as("one that also lost a section is not merely a run to repeat").isFalse();
    }

    @Test
    void longListsOfProblemsAreSummarised() {
        List<String> rounds = new ArrayList<>();
        for (int i = 0; i < 200; i++) rounds.add("round " + i + ": 2 creators won");
        String message = catchThrowable(() -> TckFixture.assertNone(rounds, "racing creates"))
                .getMessage();
        assertThat(message).startsWith("racing creates: 200 problems, the first 10")
                .contains("round 9: 2 creators won").doesNotContain("round 10:").endsWith("… and 190 more");
    }

    @Test
    void criticalSectionCheckerCountsOverlaps() {
        CriticalSectionChecker c = new CriticalSectionChecker();
        c.enter(5);
        c.enter(4); // a second holder while the first is inside
        c.exit();
        c.exit();
        c.section(6);
        assertThat(c.overlaps()).isEqualTo(1);
        assertThat(c.sections()).isEqualTo(3);
        assertThat(c.counter()).isEqualTo(1);
        assertThat(c.tokenOrderViolations()).hasSize(1);
    }
}
