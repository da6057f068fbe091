package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The command's one promise, on every backend and its real server: the lock is never free while a
 * process of the job runs — also when {@code latchkey run} itself is killed with SIGKILL (the OOM
 * killer, a container runtime, {@code kill -9}) or crashes (SIGABRT: what a fatal error or
 * {@code -XX:+CrashOnOutOfMemoryError} does), and the job left its session ({@code setsid}).
 *
 * <p>Both jobs append to one log ({@code O_APPEND}: the file's order is the order of the writes).
 * The first job writes "A" lines from CMD and from a descendant that left CMD's session and process
 * tree; its latchkey dies while a second {@code latchkey run} of the same key waits. The second
 * job writes "B-start" first. No "A" line may follow "B-start", and every process of the first job
 * must be gone by the time the second ends. Before the guard, the first job wrote on beside the
 * second on every backend (on {@code file://} at once; elsewhere once the TTL had passed).
 * Where the store frees the key the instant the holder's JVM dies ({@code file://}'s OS lock,
 * PostgreSQL's advisory session), it is the job slot ({@link JobSlot}) that holds the waiting
 * contender back while the guard kills.
 */
class JobContainmentIT {
    @TempDir
    static Path locks;

    @TempDir
    Path dir;

    /** How latchkey's JVM dies: neither gives it a chance to run any code of its own. */
    enum Death { SIGKILL, SIGABRT }

    static Stream<Arguments> backendsAndDeaths() {
        return CounterRaceIT.uris(locks).flatMap(b -> Stream.of(Death.values()).map(d -> Arguments.of(b, d)));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("backendsAndDeaths")
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // hang guard only
    void deadLatchkeyTakesItsWholeJobAlong(CounterRaceIT.Race backend, Death death) throws Exception {
        Path log = dir.resolve("log");
        String key = "contained-" + System.nanoTime();
        // the shortest TTL each backend takes: Azure's blob leases last 15 to 60 s
        String ttl = backend.uri().startsWith("azblob:") && backend.uri().contains("mode=lease") ? "15s" : "5s";
        // CMD writes, and so does a grandchild in a session of its own, re-parented to init at once
        JarCli.Running first = JarCli.start(dir, "run", "--uri", backend.uri(), "--key", key, "--ttl", ttl, "--",
                "sh", "-c", "(setsid sh -c 'echo $$ > pid.tmp; mv pid.tmp setsid.pid;"
                        + " while :; do echo A-setsid >> log; sleep 0.02; done' &);"
                        + " echo $$ > cmd.tmp; mv cmd.tmp cmd.pid; while :; do echo A >> log; sleep 0.02; done");
        List<ProcessHandle> job;
        try {
            job = List.of(ProcessTrees.awaitPids(dir.resolve("cmd.pid"), first.process.onExit()).get(0),
                    ProcessTrees.awaitPids(dir.resolve("setsid.pid"), first.process.onExit()).get(0));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; latchkey said: " + first.err(), e);
        }
        String[] contender = {"run", "--uri", backend.uri(), "--key", key, "--wait", "2m", "--ttl", ttl, "--",
                "sh", "-c", "echo B-start >> log; echo B >> log"};
        JarCli.Running second = JarCli.start(dir, contender);
        try {
            awaitLine(log, "A-setsid");
            if (death == Death.SIGKILL) {
                first.process.destroyForcibly(); // kill -9 of latchkey's JVM
            } else {
                Process abort = new ProcessBuilder("kill", "-ABRT", Long.toString(first.process.pid())).start();
                assertThat(abort.waitFor()).isZero();
            }
            first.process.waitFor();
            JarCli.Result next = second.await();
            assertThat(next.status()).as(next.err()).isZero();
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            int start = lines.indexOf("B-start");
            assertThat(start).as("the second job ran").isNotNegative();
            assertThat(lines.subList(start, lines.size())).as("the log from the second job's start on")
                    .noneMatch(line -> line.startsWith("A"));
            assertThat(job).as("the first job's processes").allMatch(ProcessTrees::hasExited);
            assertThat(first.err()).contains("CMD's processes were killed");
        } finally {
            job.forEach(ProcessHandle::destroyForcibly);
            second.process.destroyForcibly();
        }
    }

    private static void awaitLine(Path log, String line) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.exists(log) || !Files.readAllLines(log, StandardCharsets.UTF_8).contains(line)) {
            if (System.nanoTime() > deadline) throw new AssertionError("no '" + line + "' in " + log);
            Thread.sleep(20); // polls the condition "the job has written its line"
        }
    }
}
