package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.GENEROUS;
import static dev.latchkey.tck.TckFixture.show;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;

/**
 * The contention tests of {@link LockManagerContract}: threads of several managers racing on one key
 * never overlap (a {@link CriticalSectionChecker} referees overlap, lost updates and token order);
 * racers for an abandoned lease have exactly one winner, not before its TTL; and, given
 * {@link LockManagerContract#uriForOtherProcesses()}, JVMs contending on one key never overlap and a
 * killed holder process loses its lock (at its TTL, or long before it where the backend declares
 * {@link dev.latchkey.Capability#HOLDER_DEATH_DETECTION}).
 */
record ContentionChecks(LockManagerContract contract) {

    void contentionKeepsCriticalSectionsApart() throws Exception {
        List<LockManager> ms = new ArrayList<>();
        for (int i = 0; i < contract.contentionManagers(); i++) ms.add(contract.newManager());
        boolean fencing = contract.declares(ms.get(0), Capability.FENCING_TOKENS);
        String k = contract.key("contention");
        int rounds = contract.contentionRounds();
        int threads = contract.contentionManagers() * contract.contentionThreadsPerManager();
        CriticalSectionChecker checker = new CriticalSectionChecker();
        List<String> invalidInside = new CopyOnWriteArrayList<>();

        Throwable workerFailure = TckFixture.failureOf(() -> TckFixture.runConcurrently(threads, i -> {
            LockManager m = ms.get(i % ms.size());
            LeaseOptions o = LeaseOptions.ttl(Duration.ofSeconds(30)).withOwner(contract.owner("worker-" + i));
            for (int r = 0; r < rounds; r++) {
                Lease lease = contract.track(m.acquire(k, contract.contentionMaxWait(), o));
                TckFixture.criticalSection(checker, lease, invalidInside, "worker " + i + " round " + r);
                lease.release();
            }
            return null;
        }));

        TckFixture.assertContention("contention of " + threads + " workers on " + show(k), checker, fencing,
                threads * rounds, invalidInside, workerFailure);
    }

    void racingTakeoverOfAbandonedLeaseHasOneWinner() throws Exception {
        LockManager a = contract.newManager();
        String k = contract.key("takeover-race");
        int racers = contract.contentionManagers();
        List<LockManager> ms = new ArrayList<>();
        for (int i = 0; i < racers; i++) ms.add(contract.newManager());
        long start = System.nanoTime();
        contract.hold(a, k, contract.abandoned("crashed"));
        List<Lease> winners = new CopyOnWriteArrayList<>();
        AtomicLong firstWinAt = new AtomicLong();
        long limit = contract.takeoverLimit().toNanos();

        TckFixture.runConcurrently(racers, i -> {
            LeaseOptions o = contract.longLease("racer-" + i);
            while (winners.isEmpty() && System.nanoTime() - start < limit) {
                Optional<Lease> l = contract.tryTake(ms.get(i), k, o);
                if (l.isPresent()) {
                    firstWinAt.compareAndSet(0, System.nanoTime());
                    winners.add(l.get());
                } else {
                    TckFixture.pace(Duration.ofMillis(2));
                }
            }
            contract.tryTake(ms.get(i), k, o).ifPresent(winners::add); // once someone won, nobody else may
            return null;
        });

        assertThat(winners).as("racers that took the abandoned lease").hasSize(1);
        assertThat(Duration.ofNanos(firstWinAt.get() - start))
                .as("time from the abandoned holder's acquire to the first racer's win (TTL %s)", contract.shortTtl())
                .isGreaterThanOrEqualTo(contract.shortTtl());
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(winners.get(0).leaseId());
    }

    void processesContendingOnOneKeyNeverOverlap(Path work) throws Exception {
        String uri = requireProcessUri();
        boolean fencing = contract.declares(contract.newManager(), Capability.FENCING_TOKENS);
        // a run whose processes took turns in blocks proves nothing either way: run it again (at most
        // three runs), but stop at the first that found anything else
        MultiProcessContention.Report report;
        int run = 0;
        do {
            run++;
            Path dir = Files.createDirectories(work.resolve("run-" + run));
            report = MultiProcessContention.run(uri, contract.key("processes-" + run), contract.processContenders(),
                    contract.processRounds(), fencing, dir, Duration.ofMinutes(5), contract.childJvmArguments());
        } while (run < 3 && MultiProcessContention.racedTooLittle(report));
        assertThat(report.violations()).as("audit of %d processes x %d sections (run %d)", contract.processContenders(),
                contract.processRounds(), run).isEmpty();
    }

    void killedHolderProcessLosesTheLock(Path work) throws Exception {
        String uri = requireProcessUri();
        LockManager a = contract.newManager();
        boolean detects = contract.declares(a, Capability.HOLDER_DEATH_DETECTION);
        // a store that notices dead holders must free the key long before the TTL; others at the TTL
        Duration wanted = detects ? Duration.ofMinutes(10) : contract.shortTtl().multipliedBy(5);
        Duration ttl = wanted.compareTo(contract.maxTtl()) > 0 ? contract.maxTtl() : wanted;
        String k = contract.key("killed-holder");
        MultiProcessContention.Holder holder = MultiProcessContention.startHolder(uri, k, ttl, work, contract.childJvmArguments());
        try {
            assertThat(contract.tryTake(a, k, contract.longLease("heir"))).as("while the holder process lives").isEmpty();
            assertThat(a.inspect(k).map(LockInfo::fencingToken)).contains(holder.fencingToken());
        } finally {
            holder.process().destroyForcibly().waitFor();
        }
        long killed = System.nanoTime();
        Duration limit = detects ? GENEROUS : ttl.plus(contract.takeoverLimit());
        Lease next = contract.pollUntilAcquired(a, k, contract.longLease("heir"), limit);
        if (!detects) {
            // the holder's last renewal was sent at most a heartbeat (TTL/3) before the kill
            assertThat(Duration.ofNanos(System.nanoTime() - killed))
                    .as("takeover after the holder was killed, without holder-death detection (TTL %s)", ttl)
                    .isGreaterThanOrEqualTo(ttl.multipliedBy(2).dividedBy(3));
        }
        if (contract.declares(a, Capability.FENCING_TOKENS)) {
            assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
        }
    }

    private String requireProcessUri() {
        String uri = contract.uriForOtherProcesses();
        Assumptions.assumeTrue(uri != null,
                "uriForOtherProcesses() is not overridden: multi-process test skipped (the store is not shared across processes)");
        return uri;
    }
}
