package dev.latchkey.cli;

import static dev.latchkey.cli.InProcessCli.latchkey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.cli.InProcessCli.Result;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The command in-process over {@code mem://}: argument parsing, messages and exit statuses. CMDs
 * are real child processes ({@code sh}, {@code sleep}); only the JVM start of the jar is skipped
 * (that is covered by the *IT tests).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS) // hang guard only; nothing here is timed
class LatchkeyCommandTest {
    private String uri;
    private LockManager other; // another "process" on the same mem:// store

    @BeforeEach
    void open() {
        uri = "mem://cli-" + UUID.randomUUID();
        other = Latchkey.open(uri);
    }

    @AfterEach
    void close() {
        other.close();
    }

    @Test
    void runExitsWithTheCommandsStatus() {
        assertThat(latchkey("run", "--uri", uri, "--key", "k", "--", "sh", "-c", "exit 7").status()).isEqualTo(7);
        assertThat(latchkey("run", "--uri", uri, "--key", "k", "--", "true").status()).isZero();
        assertThat(other.inspect("k")).as("released after the command").isEmpty();
    }

    @Test
    void argumentsAfterTheCommandBelongToIt() {
        // no "--": -x -y -z must reach sh, not latchkey's parser
        Result r = latchkey("run", "--uri", uri, "--key", "k", "sh", "-c", "exit $#", "sh", "-x", "-y", "-z");
        assertThat(r.status()).isEqualTo(3);
    }

    @Test
    void busyLockExits75NamingTheHolder() {
        try (Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("nightly@build-7")).orElseThrow()) {
            Result r = latchkey("run", "--uri", uri, "--key", "k", "--", "true");
            assertThat(r.status()).isEqualTo(75);
            assertThat(r.errLine()).contains("'k' is busy").contains("nightly@build-7").contains(" since ");
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void busyAfterWaitingExits75NamingTheHolder() {
        try (Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("nightly@build-7")).orElseThrow()) {
            Result r = latchkey("run", "--uri", uri, "--key", "k", "--wait", "200ms", "--", "true");
            assertThat(r.status()).isEqualTo(75);
            assertThat(r.errLine()).contains("after waiting 200ms").contains("nightly@build-7");
        }
    }

    @Test
    void forceBreaksTheHolderFirst() {
        Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("stuck-job")).orElseThrow();
        Result r = latchkey("run", "--uri", uri, "--key", "k", "--force", "--", "true");
        assertThat(r.status()).isZero();
        assertThat(r.errLine()).contains("broke the lock 'k'").contains("stuck-job");
        assertThatThrownBy(held::renew).isInstanceOf(LeaseLostException.class);
    }

    /** The holder changes between --force's look-up and its break: the successor is left alone, and the lock is busy. */
    @Test
    void forceLeavesASuccessorThatCameAfterTheLookUpAlone() {
        String name = "cli-" + UUID.randomUUID();
        try (LockManager store = Latchkey.open("mem://" + name)) {
            Lease stuck = store.tryAcquire("k", LeaseOptions.defaults().withOwner("stuck-job")).orElseThrow();
            Lease[] successor = new Lease[1];
            InterposedLockProvider.afterNextInspect(name, () -> {
                stuck.release();
                successor[0] = store.tryAcquire("k", LeaseOptions.defaults().withOwner("successor-job")).orElseThrow();
            });
            Result r = latchkey("run", "--uri", "interposed://" + name, "--key", "k", "--force", "--", "true");
            assertThat(r.status()).as(r.err()).isEqualTo(75);
            assertThat(r.err()).contains("did not break the lock 'k'").contains("changed hands").contains("left alone")
                    .contains("'k' is busy").contains("successor-job");
            assertThat(successor[0].isValid()).isTrue();
            successor[0].renew(); // not broken
            successor[0].release();
        }
    }

    @Test
    void releaseForceNamesTheHolderItActuallyBroke() {
        String name = "cli-" + UUID.randomUUID();
        try (LockManager store = Latchkey.open("mem://" + name)) {
            Lease old = store.tryAcquire("k", LeaseOptions.defaults().withOwner("old-job")).orElseThrow();
            Lease[] successor = new Lease[1];
            LockInfo[] recorded = new LockInfo[1];
            InterposedLockProvider.afterNextInspect(name, () -> {
                old.release();
                successor[0] = store.tryAcquire("k", LeaseOptions.defaults().withOwner("successor-job")).orElseThrow();
                recorded[0] = store.inspect("k").orElseThrow();
            });
            Result r = latchkey("release", "--uri", "interposed://" + name, "--force", "k");
            assertThat(r.status()).as(r.err()).isZero();
            assertThat(r.out().strip()).isEqualTo("released lock 'k' held by " + recorded[0].describeHolder());
            assertThatThrownBy(successor[0]::renew).isInstanceOf(LeaseLostException.class);
        }
    }

    @Test
    void releaseForceLeaseIdBreaksOnlyThatLease() {
        Lease old = other.tryAcquire("k", LeaseOptions.defaults().withOwner("old-job")).orElseThrow();
        String oldId = old.leaseId();
        old.release();
        Lease successor = other.tryAcquire("k", LeaseOptions.defaults().withOwner("successor-job")).orElseThrow();
        Result stale = latchkey("release", "--uri", uri, "--force", "--lease-id", oldId, "k");
        assertThat(stale.status()).as(stale.err()).isEqualTo(75);
        assertThat(stale.errLine()).contains("lease " + oldId + " does not hold lock 'k'").contains("successor-job")
                .contains(successor.leaseId()).contains("left alone");
        successor.renew(); // not broken
        Result current = latchkey("release", "--uri", uri, "--force", "--lease-id", successor.leaseId(), "k");
        assertThat(current.status()).as(current.err()).isZero();
        assertThat(current.out()).contains("released lock 'k' held by lease " + successor.leaseId());
        assertThatThrownBy(successor::renew).isInstanceOf(LeaseLostException.class);
        assertThat(latchkey("release", "--uri", uri, "--force", "--lease-id", oldId, "k").out()).contains("was not held");
    }

    /**
     * CMD dies on SIGTERM, but a child it started ignores it and would sleep for ten minutes: the
     * child is killed too, and gone by the time run returns, within seconds of the loss.
     */
    @Test
    void lostLeaseKillsTheWholeTreeBeforeExiting76(@TempDir Path dir) throws Exception {
        Path pids = dir.resolve("pids");
        CompletableFuture<Result> running = CompletableFuture.supplyAsync(() -> latchkey("run", "--uri", uri,
                "--key", "k", "--ttl", "10s", "--", "sh", "-c",
                "(trap '' TERM; exec sleep 600) & echo $$ $! > '" + pids + ".tmp'; mv '" + pids + ".tmp' '" + pids
                        + "'; wait"));
        List<ProcessHandle> tree = ProcessTrees.awaitPids(pids, running);
        try {
            assertThat(other.forceRelease("k")).isTrue();
            long lostAt = System.nanoTime();
            Result r = running.get(60, TimeUnit.SECONDS);
            assertThat(r.status()).as(r.err()).isEqualTo(76);
            assertThat(r.errLine()).contains("lost the lock 'k'").contains("CMD was terminated");
            assertThat(tree).as("CMD and its TERM-ignoring child, when run returned").allMatch(ProcessTrees::hasExited);
            assertThat(Duration.ofNanos(System.nanoTime() - lostAt)).as("from the loss to run's exit; CMD sleeps 10 minutes")
                    .isLessThan(ProcessTrees.SOON);
        } finally {
            tree.forEach(ProcessHandle::destroyForcibly);
        }
    }

    /**
     * The lease is broken while CMD runs, and CMD ends by itself before a heartbeat notices (TTL 60 s:
     * the first heartbeat is 20 s away): the release at the end finds the loss. Still 76, since CMD may
     * have run beside the next holder, but nothing was terminated, and the message must not say so.
     */
    @Test
    void lossFoundOnlyAtReleaseSaysCmdEndedByItself(@TempDir Path dir) throws Exception {
        Path go = dir.resolve("go");
        CompletableFuture<Result> running = CompletableFuture.supplyAsync(() -> latchkey("run", "--uri", uri,
                "--key", "k", "--ttl", "60s", "--", "sh", "-c",
                "while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 5"));
        while (other.inspect("k").isEmpty()) Thread.sleep(20); // polls for "latchkey holds k"
        assertThat(other.forceRelease("k")).isTrue();
        Files.createFile(go);
        Result r = running.get(45, TimeUnit.SECONDS);
        assertThat(r.status()).as(r.err()).isEqualTo(76);
        assertThat(r.errLine()).contains("lost the lock 'k'").contains("CMD had already ended by itself (status 5)")
                .doesNotContain("terminated");
    }

    @Test
    void onLostIgnoreLetsTheCommandFinish(@TempDir Path dir) throws Exception {
        Path go = dir.resolve("go");
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> running = CompletableFuture.supplyAsync(() -> LatchkeyCommand
                .commandLine(Map.of(), new PrintWriter(new StringWriter()), new PrintWriter(err, true))
                .execute("run", "--uri", uri, "--key", "k", "--ttl", "1s", "--on-lost", "ignore", "--",
                        "sh", "-c", "while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 5"));
        while (other.inspect("k").isEmpty()) Thread.sleep(20); // polls for "latchkey holds k"
        other.forceRelease("k");
        while (!err.toString().contains("WARNING")) Thread.sleep(20); // the next heartbeat finds the loss
        assertThat(running).isNotDone();
        Files.createFile(go);
        assertThat(running.get(45, TimeUnit.SECONDS)).isEqualTo(5);
        assertThat(err.toString().lines()).singleElement().asString().contains("lost the lock 'k'")
                .contains("--on-lost=ignore: CMD was not stopped, so it may run beside the next holder, who may have it already");
    }

    @Test
    void missingCommandExits127() {
        Result r = latchkey("run", "--uri", uri, "--key", "k", "--", "/nonexistent/latchkey-test-cmd");
        assertThat(r.status()).isEqualTo(127);
        assertThat(r.errLine()).contains("cannot run");
        assertThat(other.inspect("k")).isEmpty();
    }

    @Test
    void unknownSchemeIsOneLineListingInstalledSchemes() {
        for (String[] args : new String[][] {
                {"run", "--uri", "nosuch://x", "--key", "k", "--", "true"},
                {"status", "--uri", "nosuch://x", "k"},
                {"list", "--uri", "nosuch://x"}}) {
            Result r = latchkey(args);
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.errLine()).startsWith("latchkey: ").contains("nosuch").contains("mem").contains("file")
                    .doesNotContain("Exception");
        }
    }

    @Test
    void malformedUriIsAUsageError() {
        Result r = latchkey("status", "--uri", "not a uri", "k");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.errLine()).startsWith("latchkey: ").doesNotContain("Exception");
    }

    @Test
    void verboseShowsTheStackTrace() {
        Result r = latchkey("status", "-v", "--uri", "nosuch://x", "k");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("UnsupportedLockUriException").contains("\tat ");
    }

    @Test
    void usageErrorsExit2WithOneLine() {
        assertThat(latchkey("run", "--uri", uri, "--", "true").errLine()).contains("--key");
        Result badWait = latchkey("run", "--uri", uri, "--key", "k", "--wait", "5x", "--", "true");
        assertThat(badWait.status()).isEqualTo(2);
        assertThat(badWait.errLine()).contains("not a duration: '5x'");
        assertThat(latchkey("run", "--uri", uri, "--key", "k").status()).as("no CMD").isEqualTo(2);
        assertThat(latchkey("frobnicate").status()).isEqualTo(2);
        assertThat(latchkey().status()).as("no subcommand").isEqualTo(2);
    }

    @Test
    void aGraceOrTtlThatCannotStopCmdInTimeIsAUsageError() {
        Result shortTtl = latchkey("run", "--uri", uri, "--key", "k", "--ttl", "2s", "--", "true");
        assertThat(shortTtl.status()).isEqualTo(2);
        assertThat(shortTtl.errLine()).contains("a TTL of 2s is too short to stop the job when the lease is lost")
                .contains("safety margin (TTL/5 = 400ms)").contains("use a TTL of 5s or more");
        Result longGrace = latchkey("run", "--uri", uri, "--key", "k", "--grace", "10s", "--", "true");
        assertThat(longGrace.status()).isEqualTo(2);
        assertThat(longGrace.errLine()).contains("a grace of 10s does not fit a TTL of 1m")
                .contains("before the store can let the next holder in").contains("(TTL/5 = 12s)")
                .contains("use a grace of 6s or less, or a TTL of 100s or more");
        assertThat(other.inspect("k")).as("refused before acquiring").isEmpty();
        assertThat(latchkey("run", "--uri", uri, "--key", "k", "--grace", "10s", "--ttl", "100s", "--", "true").status()).isZero();
        assertThat(latchkey("run", "--uri", uri, "--key", "k", "--ttl", "1s", "--on-lost", "ignore", "--", "true").status())
                .as("ignore kills nothing on loss").isZero();
    }

    @Test
    void invalidKeyIsAUsageError() {
        Result r = latchkey("run", "--uri", uri, "--key", "bad\u0001key", "--", "true");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.errLine()).contains("control characters");
    }

    @Test
    void statusShowsHolderOrFree() {
        assertThat(latchkey("status", "--uri", uri, "k").out()).contains("key      k").contains("state    free");
        try (Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("alice@host/1")).orElseThrow()) {
            Result r = latchkey("status", "--uri", uri, "k");
            assertThat(r.status()).isZero();
            assertThat(r.out()).contains("state    held").contains("owner    alice@host/1")
                    .contains("lease    " + held.leaseId());
        }
    }

    @Test
    void listShowsHeldLocksUnderThePrefix() {
        try (Lease a = other.tryAcquire("jobs/a").orElseThrow(); Lease b = other.tryAcquire("other").orElseThrow()) {
            Result r = latchkey("list", "--uri", uri, "jobs/");
            assertThat(r.status()).isZero();
            assertThat(r.out().lines()).hasSize(2).first().asString().startsWith("KEY\tOWNER");
            assertThat(r.out()).contains("jobs/a\t").doesNotContain("other\t");
        }
    }

    @Test
    void releaseRefusesWithoutForce() {
        try (Lease held = other.tryAcquire("k").orElseThrow()) {
            Result r = latchkey("release", "--uri", uri, "k");
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.errLine()).contains("without --force");
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void releaseForceBreaksTheLock() {
        Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("old-job")).orElseThrow();
        Result r = latchkey("release", "--uri", uri, "--force", "k");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("released lock 'k'").contains("old-job");
        assertThatThrownBy(held::renew).isInstanceOf(LeaseLostException.class);
        assertThat(latchkey("release", "--uri", uri, "--force", "k").out()).contains("was not held");
    }

    @Test
    void uriFallsBackToTheEnvironmentThenHome() {
        UriOption option = new UriOption();
        assertThat(option.resolve(Map.of("LATCHKEY_URI", uri, "HOME", "/home/x"))).isEqualTo(uri);
        assertThat(option.resolve(Map.of("HOME", "/home/x"))).isEqualTo("file:///home/x/.latchkey/locks");
        try (Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("env-holder")).orElseThrow()) {
            Result r = latchkey(Map.of("LATCHKEY_URI", uri), "status", "k");
            assertThat(r.out()).contains("env-holder");
        }
    }

    @Test
    void backendsListsMemAndFile() {
        Result r = latchkey("backends");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("mem").contains("file").contains("from ");
    }

    @Test
    void helpDocumentsExitStatuses() {
        Result root = latchkey("--help");
        assertThat(root.status()).isZero();
        assertThat(root.out()).contains("75").contains("76").contains("69").contains("run").contains("bench");
        assertThat(latchkey("run", "--help").out()).contains("--wait").contains("--on-lost").contains("76");
        assertThat(latchkey("run", "--help").out().replaceAll("\\s+", " ")).contains("CMD then runs beside the next holder");
        assertThat(latchkey("--version").out()).startsWith("latchkey ");
    }

    /** main() models only the subcommand it runs; what any subcommand prints and does must not change by it. */
    @Test
    void theCommandLineOfOneSubcommandBehavesAsTheWholeOne() {
        for (String name : List.of("run", "status", "list", "release", "backends", "bench", "check")) {
            StringWriter whole = new StringWriter();
            int wholeStatus = LatchkeyCommand.commandLine(Map.of(), new PrintWriter(whole, true), new PrintWriter(new StringWriter()))
                    .execute(name, "--help");
            StringWriter one = new StringWriter();
            CommandLine lazy = LatchkeyCommand.forArgs(Map.of(), new PrintWriter(one, true), new PrintWriter(new StringWriter()),
                    name, "--help");
            assertThat(lazy.getSubcommands().keySet()).as("subcommands modelled for '%s'", name).containsExactly(name);
            assertThat(lazy.execute(name, "--help")).isEqualTo(wholeStatus).isZero();
            assertThat(one.toString()).as("help of '%s'", name).isEqualTo(whole.toString());
        }
        // anything else gets them all: the root's help lists them, a misspelt one is a usage error
        assertThat(latchkey("--help").out()).contains("run", "status", "list", "release", "backends", "bench", "check");
        Result typo = latchkey("rn", "--key", "k");
        assertThat(typo.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(typo.err()).contains("Unmatched arguments from index 0: 'rn'");
        assertThat(latchkey("run", "--uri", uri, "--key", "k", "--", "sh", "-c", "exit 3").status()).isEqualTo(3);
    }

    @Test
    void benchPrintsItsTable() {
        Result r = latchkey("bench", "mem://cli-bench", "--duration", "100ms", "--warmup", "10ms", "--threads", "2");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("acquire+release").contains("floor: ").contains("handoff").contains("ratio of p50s: acquire+release / floor: ");
    }

    @Test
    void jobRecordIsPrintableBoundedAndKeepsArgumentsOnlyWhenAsked() {
        assertThat(JobRecord.describe(List.of("sh", "-c", "a\nb"), true)).isEqualTo("sh -c a?b");
        assertThat(JobRecord.describe(List.of("x".repeat(300)), true)).hasSize(256);
        assertThat(JobRecord.describe(List.of("mysqldump", "-pHunter2", "db"), false))
                .isEqualTo("mysqldump (2 arguments, not recorded)").doesNotContain("Hunter2");
        assertThat(JobRecord.describe(List.of("true"), false)).isEqualTo("true");
    }

    @Test
    void heartbeatKeepsTheLeaseWhileTheCommandOutlivesItsTtl() {
        // without renewal the 5s lease would end under the 6s CMD and release would report it lost (76)
        Result r = latchkey("run", "--uri", uri, "--key", "k", "--ttl", "5s", "--", "sleep", "6");
        assertThat(r.status()).as(r.err()).isZero();
    }
}
