package dev.latchkey.cli.check;

import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code latchkey run}'s own death does to its job on the deployment of the check that is
 * running ({@link LiveCheck}): a child {@code latchkey run} of this installation holds a key of the
 * deployment while its CMD sleeps; the child is killed with SIGKILL; then the CMD must be gone, and
 * the check reports when, against when this JVM could take the key. Where the key is free before the
 * job is gone (a store that frees it at the holder's death: {@code file://}, PostgreSQL advisory
 * mode), the difference is the residual window in which a contender on another host could start
 * beside the dying job (runs on the same host wait for the job slot). The URI reaches the child
 * through its environment ({@code LATCHKEY_URI}), never its command line. Not for {@code mem://},
 * which no other process can see.
 */
public final class LiveJobContainmentContract {
    private static final Duration MIN_RUN_TTL = Duration.ofSeconds(5);
    /** A hang guard for the child's start and the job's end; never a performance expectation. */
    private static final Duration GENEROUS = Duration.ofMinutes(2);

    private final LiveCheck.Settings settings = LiveCheck.current();

    @Test
    void killedRunnerTakesItsJobAlong(@TempDir Path dir, TestReporter report) throws Exception {
        assumeFalse(settings.uri().startsWith("mem:"), "mem:// lives in one JVM: a latchkey run of its own cannot share it");
        Duration ttl = settings.ttl().compareTo(MIN_RUN_TTL) < 0 ? MIN_RUN_TTL : settings.ttl();
        String key = "tck-job-" + UUID.randomUUID();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder run = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                "dev.latchkey.cli.LatchkeyCommand", "run", "--key", key, "--ttl", ttl.toMillis() + "ms", "--",
                "sh", "-c", "echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 600"))
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(dir.resolve("runner.err").toFile());
        run.environment().put("LATCHKEY_URI", settings.uri());
        Process runner = run.start();
        ProcessHandle job = null;
        try (LockManager contender = settings.backends().open(settings.uri(), LockContext.defaults())) {
            job = awaitJob(dir.resolve("pid"), runner, dir.resolve("runner.err"));
            Optional<Lease> shared = contender.tryAcquire(key, LeaseOptions.ttl(ttl));
            if (shared.isPresent()) shared.get().release();
            assumeTrue(shared.isEmpty(), "the store is not shared between processes (another process's lock is free here)");
            runner.destroyForcibly();
            runner.waitFor();
            long died = System.nanoTime();
            // one loop looks at both, each a few milliseconds apart: the JDK's onExit of a process that is
            // not our child polls far more coarsely
            long deadline = died + ttl.multipliedBy(2).plus(GENEROUS).toNanos();
            long jobGoneAt = 0;
            long freeAt = 0;
            while (jobGoneAt == 0 || freeAt == 0) {
                if (jobGoneAt == 0 && ended(job)) jobGoneAt = System.nanoTime();
                if (freeAt == 0) {
                    Optional<Lease> got = contender.tryAcquire(key, LeaseOptions.ttl(ttl));
                    if (got.isPresent()) {
                        freeAt = System.nanoTime();
                        got.get().release();
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError(jobGoneAt == 0 ? "the job of the killed latchkey run is still running"
                            : "the killed holder's key did not come free within twice its TTL and " + GENEROUS);
                }
                Thread.sleep(2); // polls the conditions "the job has ended" and "the key is free"
            }
            long jobMs = TimeUnit.NANOSECONDS.toMillis(jobGoneAt - died);
            long freeMs = TimeUnit.NANOSECONDS.toMillis(freeAt - died);
            report.publishEntry("containment", "after latchkey's SIGKILL: its job gone at " + jobMs + " ms, the key free at "
                    + freeMs + " ms" + (jobMs > freeMs ? "; residual window " + (jobMs - freeMs) + " ms (a contender on another"
                            + " host could start in it; runs on this host wait for the job slot)" : "; no window"));
        } finally {
            runner.destroyForcibly();
            if (job != null) job.destroyForcibly();
        }
    }

    private static ProcessHandle awaitJob(Path pidFile, Process runner, Path err) throws Exception {
        long deadline = System.nanoTime() + GENEROUS.toNanos();
        while (!Files.exists(pidFile)) {
            if (!runner.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("latchkey run did not start its job (status "
                        + (runner.isAlive() ? "still running" : runner.exitValue()) + "): "
                        + Files.readString(err, StandardCharsets.UTF_8).strip());
            }
            Thread.sleep(20); // polls the condition "the job has written its pid"
        }
        long pid = Long.parseLong(Files.readString(pidFile, StandardCharsets.UTF_8).strip());
        return ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("the job ended before latchkey was killed"));
    }

    /** Exited, or a zombie: the JDK reports a zombie as alive. */
    private static boolean ended(ProcessHandle p) {
        if (!p.isAlive()) return true;
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"), StandardCharsets.UTF_8);
            int end = stat.lastIndexOf(')'); // the command name in parentheses may itself hold spaces and ')'
            return end >= 0 && end + 2 < stat.length() && "ZX".indexOf(stat.charAt(end + 2)) >= 0;
        } catch (java.io.IOException e) {
            return !p.isAlive();
        }
    }
}
