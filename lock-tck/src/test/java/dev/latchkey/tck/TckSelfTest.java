package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectIteration;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.engine.LeaseEngine;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

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

    static class RacyStoreLocks extends LockManagerContract {
        final Map<String, BrokenBackends.Rec> backing = new ConcurrentHashMap<>();

        @Override protected LockManager newManager(LockContext context) {
            return new LeaseEngine(new BrokenBackends.RacyStore(backing), context, Set.of());
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
            return new LeaseEngine(new BrokenBackends.WallClockAgeStore(backing, context.time()), context, Set.of());
        }
    }

    static class ConstantTokenLocks extends LockManagerContract {
        final String name = BrokenBackends.uniqueName();

        @Override protected LockManager newManager(LockContext context) {
            return BrokenBackends.constantToken(Latchkey.open("mem://" + name, context));
        }
    }

    @Test
    void casContractCatchesNonAtomicCreateAndReplace() {
        assertThat(failures(method(RacyStoreCas.class, "racingCreatesHaveExactlyOneWinner"),
                method(RacyStoreCas.class, "racingReplacesOfOneVersionHaveExactlyOneWinner"),
                method(RacyStoreCas.class, "createReadReplaceDelete")))
                .containsExactlyInAnyOrder("racingCreatesHaveExactlyOneWinner",
                        "racingReplacesOfOneVersionHaveExactlyOneWinner");
    }

    @Test
    void lockContractCatchesTwoHoldersFromARacyStore() {
        assertThat(failures(method(RacyStoreLocks.class, "contentionKeepsCriticalSectionsApart"),
                method(RacyStoreLocks.class, "racingTryAcquireOnOneManagerHasOneWinner")))
                .containsExactlyInAnyOrder("contentionKeepsCriticalSectionsApart",
                        "racingTryAcquireOnOneManagerHasOneWinner");
    }

    @Test
    void lockContractCatchesTakeoverBeforeTheTtl() {
        assertThat(failures(method(EarlyExpiryLocks.class, "abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore"),
                method(EarlyExpiryLocks.class, "racingTakeoverOfAbandonedLeaseHasOneWinner")))
                .containsExactlyInAnyOrder("abandonedLeaseIsTakenOverAfterItsTtlAndNotBefore",
                        "racingTakeoverOfAbandonedLeaseHasOneWinner");
    }

    @Test
    void lockContractCatchesExpiryJudgedByWallClocks() {
        // iterations 0 and 3: contender an hour ahead, holder an hour behind — both make the lease look old
        DiscoverySelector skew = method(WallClockLocks.class, "skewedWallClockTakesNothingEarly",
                "java.time.Duration, java.lang.String");
        assertThat(failures(selectIteration(skew, 0, 3)))
                .containsExactly("skewedWallClockTakesNothingEarly", "skewedWallClockTakesNothingEarly");
    }

    @Test
    void lockContractCatchesFencingTokensThatDoNotIncrease() {
        assertThat(failures(method(ConstantTokenLocks.class, "fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease"),
                method(ConstantTokenLocks.class, "contentionKeepsCriticalSectionsApart")))
                .containsExactlyInAnyOrder("fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease",
                        "contentionKeepsCriticalSectionsApart");
    }

    @Test
    void multiProcessAuditFlagsOverlapsLostUpdatesAndTokenOrder(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("log");
        Path counter = dir.resolve("counter");
        Files.writeString(counter, "3");
        Files.write(log, List.of("enter 1 0 1 a", "exit 1 0 1 a", "enter 2 0 2 b", "exit 2 0 2 b",
                "enter 1 1 3 c", "exit 1 1 3 c"));
        assertThat(MultiProcessContention.audit(log, counter, 3, true, new ArrayList<>()).violations()).isEmpty();

        Files.write(log, List.of("enter 1 0 1 a", "enter 2 0 2 b", "exit 1 0 1 a", "exit 2 0 2 b",
                "enter 1 1 2 c", "exit 1 1 2 c"));
        Files.writeString(counter, "2");
        List<String> v = MultiProcessContention.audit(log, counter, 3, true, new ArrayList<>()).violations();
        assertThat(v).anyMatch(s -> s.contains("while 1 0 1 a was inside"))
                .anyMatch(s -> s.contains("token 2 after 2"))
                .anyMatch(s -> s.contains("lost updates"));
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

    // ---------------------------------------------------------------- running contracts

    private static DiscoverySelector method(Class<?> contract, String name) {
        return selectMethod(contract, name);
    }

    private static DiscoverySelector method(Class<?> contract, String name, String parameterTypes) {
        return selectMethod(contract, name, parameterTypes);
    }

    /** Runs the selected tests in a nested JUnit launcher; returns the method names of those that failed. */
    private static List<String> failures(DiscoverySelector... selectors) {
        List<String> failed = new ArrayList<>();
        List<String> ran = new ArrayList<>();
        TestExecutionListener listener = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (!id.isTest()) return;
                String m = id.getSource().filter(MethodSource.class::isInstance)
                        .map(s -> ((MethodSource) s).getMethodName()).orElse(id.getDisplayName());
                ran.add(m);
                if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) failed.add(m);
            }
        };
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectors).build(), listener);
        assertThat(ran).as("tests the nested launcher ran").isNotEmpty();
        return failed;
    }
}
