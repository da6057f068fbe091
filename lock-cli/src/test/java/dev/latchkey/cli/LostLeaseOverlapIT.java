package dev.latchkey.cli;

import static dev.latchkey.tck.ExternalServer.withParam;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.FaultProxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The promise of {@code latchkey run} when the store stops answering: the lease expires, and CMD's
 * whole process tree — though it ignores SIGTERM and would run for minutes — is dead before the
 * store lets the next {@code latchkey run} in. Two jar JVMs on one PostgreSQL lease table (its
 * expiry is the server's clock); the holder reaches the server through a {@link FaultProxy} that
 * the test turns into a black hole.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // hang guard only
class LostLeaseOverlapIT {
    @TempDir
    Path dir;

    @Test
    void aCommandIgnoringSigtermIsDeadBeforeTheNextHolderStartsItsOwn() throws Exception {
        // a schema holds the locks of one mode: lease mode in a schema of its own, as in CounterRaceIT
        String direct = withParam(withParam(withParam(ExternalServer.uri("LATCHKEY_TEST_POSTGRES_URI", "postgres"),
                "mode", "lease"), "schema", "latchkey_lease"), "timeout", "2s");
        String key = "overlap-" + UUID.randomUUID();
        // CMD and its child ignore SIGTERM and append "A" every 20 ms for as long as either lives
        String loop = "while :; do echo A >> log; sleep 0.02; done";
        List<ProcessHandle> tree = List.of();
        LockUri server = LockUri.parse(direct);
        try (FaultProxy proxy = FaultProxy.start(server.host(), server.port().orElseThrow())) {
            JarCli.Running holder = JarCli.start(dir, "run", "--uri", proxy.rewrite(direct), "--key", key,
                    "--ttl", "6s", "--", "sh", "-c",
                    "trap '' TERM; (" + loop + ") & echo $$ $! > pids.tmp; mv pids.tmp pids; " + loop);
            tree = ProcessTrees.awaitPids(dir.resolve("pids"), holder.process.onExit());
            JarCli.Running next = JarCli.start(dir, "run", "--uri", direct, "--key", key, "--wait", "2m", "--",
                    "sh", "-c", "echo B-start >> log; sleep 2; echo B-end >> log");
            proxy.blackhole(); // the holder's store stops answering: renewals hang, none lands

            JarCli.Result lost = holder.await();
            assertThat(tree).as("the holder's CMD and child, when it exited").allMatch(ProcessTrees::hasExited);
            JarCli.Result after = next.await();

            List<String> log = Files.readAllLines(dir.resolve("log"), StandardCharsets.UTF_8);
            int bStart = log.indexOf("B-start");
            assertThat(bStart).as("the next holder's CMD ran; %s", after.err()).isPositive();
            assertThat(log.subList(0, bStart)).as("the holder's CMD ran before").contains("A");
            assertThat(log.subList(bStart, log.size())).as("nothing of the holder's tree wrote once the next CMD ran")
                    .containsExactly("B-start", "B-end");
            assertThat(after.status()).as(after.err()).isZero();
            assertThat(lost.status()).as(lost.err()).isEqualTo(76);
            assertThat(lost.err()).contains("lost the lock '" + key + "'")
                    .contains("CMD was terminated before anyone else could get the lock");
        } finally {
            tree.forEach(ProcessHandle::destroyForcibly);
        }
    }
}
