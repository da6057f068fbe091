package dev.latchkey.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library's side of job containment, in this JVM: a job is every process of the command's tree
 * and every process carrying the lease's id, also one that left the tree ({@code setsid}); it is
 * stopped on the lease's loss, its leftovers are waited for or killed, and the slot keeps the next
 * job of the lock waiting. (This JVM's own death is tried through the command, in lock-cli's
 * JobContainmentIT, on every backend.)
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // hang guard only
class LockedProcessTest {
    /** A descendant that leaves the command's session and tree, and runs until killed. */
    private static final String ESCAPES = "(setsid sh -c 'echo $$ > escaped.tmp; mv escaped.tmp escaped.pid;"
            + " while :; do sleep 0.05; done' &); ";

    @TempDir
    Path dir;

    @Test
    void aLostLeaseStopsEveryProcessOfTheJobAlsoOneThatLeftTheTree() throws Exception {
        try (LockManager locks = Latchkey.open("mem://" + dir.getFileName())) {
            Lease lease = locks.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(5))).orElseThrow();
            LockedProcess job = LockedProcess.of(sh(ESCAPES + "exec sleep 600")).slotEnvironment(slots())
                    .start(locks, lease);
            ProcessHandle escaped = awaitPid("escaped.pid");
            assertThat(locks.forceRelease("job", lease.leaseId())).isTrue(); // the lease is lost at its next renewal

            int status = job.waitFor();
            assertThat(job.isTerminating()).as("stopped because the lease was lost").isTrue();
            assertThat(status).as("the command's status: killed by SIGTERM, or SIGKILL once the grace (0 at this TTL) ran out").isIn(128 + 15, 128 + 9);
            assertThat(hasEnded(escaped)).as("the descendant that left the tree").isTrue();
            assertThat(job.survivors()).isEmpty();
        }
    }

    @Test
    void leftoversAreWaitedForByDefaultAndKilledWhenAsked() throws Exception {
        try (LockManager locks = Latchkey.open("mem://" + dir.getFileName())) {
            Lease lease = locks.tryAcquire("wait").orElseThrow();
            // the leftover ends by itself once told to; until then waitFor() must not return
            LockedProcess waited = LockedProcess.of(sh("(while [ ! -e done ]; do sleep 0.02; done; echo ended > leftover) &"
                    + " echo $! > left.pid")).slotEnvironment(slots()).start(locks, lease);
            ProcessHandle leftover = awaitPid("left.pid");
            Files.writeString(dir.resolve("done"), "");
            assertThat(waited.waitFor()).isZero();
            assertThat(hasEnded(leftover)).as("waitFor() returned once the leftover had exited").isTrue();
            assertThat(Files.readString(dir.resolve("leftover")).trim()).as("it ran to its end").isEqualTo("ended");
            lease.release();

            Lease again = locks.tryAcquire("kill").orElseThrow();
            LockedProcess killed = LockedProcess.of(sh(ESCAPES + "exit 3")).leftovers(LockedProcess.Leftovers.KILL)
                    .slotEnvironment(slots()).start(locks, again);
            assertThat(killed.waitFor()).as("the command's own status").isEqualTo(3);
            assertThat(hasEnded(awaitPid("escaped.pid"))).as("the leftover, stopped").isTrue();
            again.release();
        }
    }

    @Test
    void theNextJobOfTheLockOnThisHostStartsOnlyOnceTheLastOneHasEnded() throws Exception {
        try (LockManager locks = Latchkey.open("mem://" + dir.getFileName())) {
            Lease first = locks.tryAcquire("slot").orElseThrow();
            LockedProcess a = LockedProcess.of(sh("while [ ! -e done ]; do sleep 0.02; done; echo A-end >> log"))
                    .slotEnvironment(slots()).start(locks, first);
            first.release(); // as if the store had freed the key while the job still ran (a dead holder's session)
            // the first holder waits for its job as a holder does: the guard learns of the command's end from it
            CompletableFuture<Integer> aEnded = CompletableFuture.supplyAsync(() -> exitStatus(a));
            Lease second = locks.tryAcquire("slot").orElseThrow();
            Thread releaser = new Thread(() -> {
                try {
                    // not a wait for a condition: the second job's start must be under way by then. Had the
                    // slot let it in, its line would come first; a start slower than this only weakens the test
                    Thread.sleep(200);
                    Files.writeString(dir.resolve("done"), "");
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            releaser.start();
            LockedProcess b = LockedProcess.of(sh("echo B-start >> log")).slotEnvironment(slots()).start(locks, second);
            assertThat(b.waitFor()).isZero();
            assertThat(aEnded.get()).isZero();
            releaser.join();
            assertThat(Files.readAllLines(dir.resolve("log"))).as("the second job started after the first ended")
                    .containsExactly("A-end", "B-start");
            second.release();
        }
    }

    @Test
    void aGraceThatDoesNotFitTheLeaseIsRefusedBeforeAnythingRuns() throws Exception {
        try (LockManager locks = Latchkey.open("mem://" + dir.getFileName())) {
            Lease lease = locks.tryAcquire("grace", LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
            assertThatThrownBy(() -> LockedProcess.of(sh("touch ran")).grace(Duration.ofSeconds(30)).start(locks, lease))
                    .isExactlyInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("a grace of 30s does not fit a TTL of 1m");
            assertThat(dir.resolve("ran")).doesNotExist();
            lease.release();
        }
    }

    private static int exitStatus(LockedProcess job) {
        try {
            return job.waitFor();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private ProcessBuilder sh(String script) {
        return new ProcessBuilder("sh", "-c", script).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("out").toFile());
    }

    private Map<String, String> slots() {
        return Map.of("XDG_RUNTIME_DIR", dir.toString());
    }

    private ProcessHandle awaitPid(String file) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                long pid = Long.parseLong(Files.readString(dir.resolve(file), StandardCharsets.US_ASCII).trim());
                return ProcessHandle.of(pid).orElseThrow(() -> new AssertionError(file + ": " + pid + " already gone"));
            } catch (NoSuchFileException notYet) {
                if (System.nanoTime() > deadline) throw new AssertionError("no " + file + "; output: " + output());
                Thread.sleep(10); // polls the condition "the job has written its pid"
            }
        }
    }

    private String output() throws IOException {
        Path out = dir.resolve("out");
        return Files.exists(out) ? Files.readString(out) : "";
    }

    /** Gone, or a zombie that nobody has reaped yet (a re-parented process whose new parent does not reap). */
    private static boolean hasEnded(ProcessHandle p) throws IOException {
        if (!p.isAlive()) return true;
        try {
            List<String> stat = List.of(Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat")).split("\\) ", 2));
            return stat.size() == 2 && stat.get(1).startsWith("Z");
        } catch (NoSuchFileException gone) {
            return true;
        }
    }
}
