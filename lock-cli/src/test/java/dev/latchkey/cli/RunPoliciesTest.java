package dev.latchkey.cli;

import static dev.latchkey.cli.InProcessCli.latchkey;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.cli.InProcessCli.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code latchkey run} gives CMD of its lease (environment variables), and its policies for a
 * busy lock ({@code --busy-exit}) and for running without the lock ({@code --bypass-lock}), in-process
 * over {@code mem://} with real child processes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS) // hang guard only; nothing here is timed
class RunPoliciesTest {
    /**
     * User info that must never reach CMD. mem:// refuses user info, so the tests go through
     * {@code interposed://} (the mem:// store of the same name), which ignores it.
     */
    private static final String SECRET = "alice:PWsecret";

    private String name;
    private String uri;
    private LockManager other; // another "process" on the same mem:// store
    @TempDir
    Path dir;

    @BeforeEach
    void open() {
        name = "cli-" + UUID.randomUUID();
        uri = "interposed://" + SECRET + "@" + name;
        other = Latchkey.open("mem://" + name);
    }

    @AfterEach
    void close() {
        other.close();
    }

    /** A CMD that records the LATCHKEY_* part of its environment and the whole of it, then runs {@code then}. */
    private String[] recordingEnvironment(String then) {
        Path env = dir.resolve("env");
        return new String[] {"sh", "-c", "env > '" + dir.resolve("all.tmp") + "'; mv '" + dir.resolve("all.tmp") + "' '"
                + dir.resolve("all") + "'; env | grep '^LATCHKEY_' > '" + env + ".tmp'; mv '" + env + ".tmp' '" + env + "'; " + then};
    }

    private static Map<String, String> variables(String envFile) {
        return envFile.lines().map(l -> l.split("=", 2))
                .collect(Collectors.toMap(kv -> kv[0], kv -> kv.length > 1 ? kv[1] : ""));
    }

    private static String[] args(String[] head, String... cmd) {
        String[] all = new String[head.length + cmd.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(cmd, 0, all, head.length, cmd.length);
        return all;
    }

    /** While CMD runs, its variables are those of the lease the store records as the holder. */
    @Test
    void cmdSeesItsLeaseAndTheMaskedBackend() throws Exception {
        Path go = dir.resolve("go");
        CompletableFuture<Result> running = CompletableFuture.supplyAsync(() -> latchkey(args(
                new String[] {"run", "--uri", uri, "--key", "jobs/nightly", "--"},
                recordingEnvironment("while [ ! -e '" + go + "' ]; do sleep 0.05; done"))));
        Map<String, String> seen = variables(ProcessTrees.awaitFile(dir.resolve("env"), running));
        LockInfo holder = other.inspect("jobs/nightly").orElseThrow();
        Files.createFile(go);
        Result r = running.get(45, TimeUnit.SECONDS);
        assertThat(r.status()).as(r.err()).isZero();

        assertThat(holder.fencingToken()).as("mem:// declares FENCING_TOKENS, so a token above 0").isPositive();
        String backend;
        try (LockManager same = Latchkey.open(uri)) {
            backend = same.description();
        }
        assertThat(seen).containsOnly(
                Map.entry("LATCHKEY_KEY", "jobs/nightly"),
                Map.entry("LATCHKEY_LEASE_ID", holder.leaseId()),
                Map.entry("LATCHKEY_TOKEN", Long.toString(holder.fencingToken())),
                Map.entry("LATCHKEY_OWNER", holder.owner()),
                Map.entry("LATCHKEY_BACKEND", backend));
        assertThat(backend).contains("mem://" + name);
        assertThat(Files.readString(dir.resolve("all"))).as("CMD's whole environment")
                .doesNotContain("PWsecret").doesNotContain("alice");
    }

    @Test
    void busyExitZeroSkipsQuietlyWithOneLineNamingTheHolder() {
        try (Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("nightly@build-7")).orElseThrow()) {
            Path ran = dir.resolve("ran");
            Result r = latchkey("run", "--uri", uri, "--key", "k", "--busy-exit", "0", "--", "touch", ran.toString());
            assertThat(r.status()).isZero();
            assertThat(r.errLine()).contains("'k' is busy").contains("nightly@build-7").contains(" since ");
            assertThat(r.out()).isEmpty();
            assertThat(ran).as("CMD did not run").doesNotExist();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void busyExitAppliesAfterWaitingToo() {
        try (Lease held = other.tryAcquire("k").orElseThrow()) {
            Result r = latchkey("run", "--uri", uri, "--key", "k", "--wait", "100ms", "--busy-exit", "3", "--", "true");
            assertThat(r.status()).isEqualTo(3);
            assertThat(r.errLine()).contains("'k' is busy after waiting 100ms");
            assertThat(held.isValid()).isTrue();
        }
        assertThat(latchkey("run", "--uri", uri, "--key", "k", "--busy-exit", "3", "--", "sh", "-c", "exit 9").status())
                .as("a free lock: CMD's own status").isEqualTo(9);
    }

    @Test
    void busyExitOutsideAnExitStatusIsAUsageError() {
        for (String code : new String[] {"256", "-1"}) {
            Result r = latchkey("run", "--uri", uri, "--key", "k", "--busy-exit", code, "--", "true");
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.errLine()).contains("--busy-exit " + code + " is not an exit status: use 0..255");
        }
        assertThat(other.inspect("k")).as("refused before acquiring").isEmpty();
    }

    /** The holder keeps its lock; CMD runs beside it, warned about, with no lease variables. */
    @Test
    void bypassLockRunsCmdBesideTheHolderWithAWarning() throws Exception {
        try (Lease held = other.tryAcquire("k", LeaseOptions.defaults().withOwner("nightly@build-7")).orElseThrow()) {
            Result r = latchkey(args(new String[] {"run", "--uri", uri, "--key", "k", "--bypass-lock", "--"},
                    recordingEnvironment("exit 4")));
            assertThat(r.status()).as(r.err()).isEqualTo(4);
            assertThat(r.errLine()).startsWith("latchkey: WARNING: --bypass-lock: running CMD without taking the lock 'k'");
            assertThat(Files.readString(dir.resolve("env"))).as("LATCHKEY_* variables of CMD").isEmpty();
            held.renew(); // not broken
            assertThat(other.inspect("k").orElseThrow().leaseId()).isEqualTo(held.leaseId());
        }
    }

    @Test
    void bypassLockDoesNotContactTheBackend() {
        Result r = latchkey("run", "--uri", "postgres://" + SECRET + "@127.0.0.1:1/db", "--key", "k", "--bypass-lock",
                "--", "sh", "-c", "exit 6");
        assertThat(r.status()).as(r.err()).isEqualTo(6);
        assertThat(r.errLine()).contains("WARNING: --bypass-lock");
    }

    @Test
    void bypassLockRefusesOptionsAboutTheLock() throws IOException {
        Path ran = dir.resolve("ran");
        for (String[] lockOnly : new String[][] {{"--force"}, {"--wait", "1s"}, {"--ttl", "10s"}, {"--on-lost", "ignore"},
                {"--busy-exit", "0"}}) {
            Result r = latchkey(args(args(new String[] {"run", "--uri", uri, "--key", "k", "--bypass-lock"}, lockOnly),
                    "--", "touch", ran.toString()));
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.errLine()).isEqualTo("latchkey: --bypass-lock takes no lock, so " + lockOnly[0]
                    + " cannot apply: drop it, or drop --bypass-lock to run CMD under the lock");
        }
        Result two = latchkey("run", "--uri", uri, "--key", "k", "--bypass-lock", "--wait", "1s", "--force", "--", "true");
        assertThat(two.errLine()).contains("so --wait, --force cannot apply: drop them");
        assertThat(ran).as("CMD never ran").doesNotExist();
    }

    @Test
    void bypassLockTakesAnyGrace() {
        // a grace that does not fit --ttl 1m's kill window: nothing is killed on a loss without a lease
        Result r = latchkey("run", "--uri", uri, "--key", "k", "--bypass-lock", "--grace", "30s", "--", "true");
        assertThat(r.status()).as(r.err()).isZero();
    }

    @Test
    void helpDocumentsTheVariablesAndPolicies() {
        String help = latchkey("run", "--help").out().replaceAll("\\s+", " ");
        assertThat(help).contains("LATCHKEY_KEY, LATCHKEY_LEASE_ID, LATCHKEY_TOKEN")
                .contains("0 where the backend declares no FENCING_TOKENS capability")
                .contains("LATCHKEY_OWNER and LATCHKEY_BACKEND (the URI with every secret masked)")
                .contains("--busy-exit=CODE").contains("0 = skip quietly")
                .contains("--bypass-lock").contains("Unlike --force, which breaks the holder's lock and takes it over")
                .contains("To run beside the holder instead, see --bypass-lock");
    }

    /** Within --wait, retriable backend errors are retried; CMD runs once the store answers. */
    @Test
    void retriableErrorsWithinTheWaitAreRetriedAndCmdRuns() throws Exception {
        InterposedLockProvider.failNextAcquires(name, new LockBackendException("timed out (injected)", true),
                new LockBackendException("connection refused (injected)", true));
        Result r = latchkey("run", "--uri", uri, "--key", "k", "--wait", "30s", "--",
                "sh", "-c", "echo ran > '" + dir.resolve("ran") + "'");
        assertThat(r.status()).as("exit status; stderr: %s", r.err()).isZero();
        assertThat(dir.resolve("ran")).hasContent("ran");
    }

    /** A non-retriable error ends the run at once (exit 69), as does a retriable one the wait outlasts. */
    @Test
    void nonRetriableErrorsAndErrorsPastTheWaitEndTheRun() throws Exception {
        InterposedLockProvider.failNextAcquires(name, new LockBackendException("permission denied (injected)", false));
        Result denied = latchkey("run", "--uri", uri, "--key", "k", "--wait", "30s", "--", "true");
        assertThat(denied.status()).isEqualTo(69);
        assertThat(denied.err()).contains("permission denied (injected)");

        LockBackendException[] always = new LockBackendException[100];
        Arrays.fill(always, new LockBackendException("unreachable (injected)", true));
        InterposedLockProvider.failNextAcquires(name, always);
        Result gone = latchkey("run", "--uri", uri, "--key", "k", "--wait", "1s", "--", "true");
        assertThat(gone.status()).isEqualTo(69);
        assertThat(gone.err()).contains("unreachable (injected)");
    }
}
