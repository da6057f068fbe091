package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar as scripts use it: separate JVMs on one {@code file://} directory, real signals.
 * These are the "done when" scenarios of the command line.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // hang guard only
class LatchkeyJarIT {
    @TempDir
    Path dir;
    private String uri;

    @BeforeEach
    void uri() {
        uri = "file://" + dir.resolve("locks");
    }

    @Test
    void runsTheCommandWithItsOutput() throws Exception {
        JarCli.Result r = JarCli.run(dir, "run", "--uri", uri, "--key", "demo", "--", "echo", "hello");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("hello\n");
        assertThat(r.err()).isEmpty();
    }

    /**
     * A run inside a run (or a job started by one): the inner CMD sees its own lease, never the
     * enclosing one's, and a bypass inside a run sees no lease at all.
     */
    @Test
    void innerRunsReplaceTheLeaseVariablesAndABypassClearsThem() throws Exception {
        String latchkey = "'" + Path.of(System.getProperty("java.home"), "bin", "java") + "' "
                + String.join(" ", JarCli.JVM_OPTIONS) + " -jar '" + JarCli.JAR + "' run --uri '" + uri + "' --key inner";
        JarCli.Result r = JarCli.run(dir, "run", "--uri", uri, "--key", "outer", "--", "sh", "-c",
                "env > outer && " + latchkey + " -- sh -c 'env > inner' && " + latchkey + " --bypass-lock -- sh -c 'env > bypassed'");
        assertThat(r.status()).as(r.err()).isZero();
        Map<String, String> outer = leaseVariables(dir.resolve("outer"));
        Map<String, String> inner = leaseVariables(dir.resolve("inner"));
        assertThat(outer).containsEntry("LATCHKEY_KEY", "outer").containsKeys("LATCHKEY_LEASE_ID", "LATCHKEY_TOKEN",
                "LATCHKEY_OWNER", "LATCHKEY_BACKEND");
        assertThat(inner).containsEntry("LATCHKEY_KEY", "inner").containsEntry("LATCHKEY_TOKEN", "1")
                .containsKeys("LATCHKEY_OWNER", "LATCHKEY_BACKEND").hasSize(5);
        assertThat(inner.get("LATCHKEY_LEASE_ID")).isNotBlank().isNotEqualTo(outer.get("LATCHKEY_LEASE_ID"));
        assertThat(leaseVariables(dir.resolve("bypassed"))).as("under --bypass-lock").isEmpty();
        assertThat(r.err()).contains("WARNING: --bypass-lock");
    }

    /** The LATCHKEY_* variables of an {@code env} listing, but the launcher's LATCHKEY_URI and LATCHKEY_JAVA_OPTS. */
    private static Map<String, String> leaseVariables(Path envListing) throws IOException {
        return Files.readAllLines(envListing).stream().filter(l -> l.startsWith("LATCHKEY_"))
                .map(l -> l.split("=", 2))
                .filter(kv -> !kv[0].equals("LATCHKEY_URI") && !kv[0].equals("LATCHKEY_JAVA_OPTS"))
                .collect(Collectors.toMap(kv -> kv[0], kv -> kv[1]));
    }

    @Test
    void passesTheCommandsExitStatusThrough() throws Exception {
        assertThat(JarCli.run(dir, "run", "--uri", uri, "--key", "k", "--", "sh", "-c", "exit 7").status()).isEqualTo(7);
    }

    @Test
    void secondConcurrentRunExits75NamingTheHolder() throws Exception {
        // both start together; the holder keeps the lock until we create "done", so the loser's
        // attempt certainly overlaps it, however slowly the JVMs start
        String[] run = {"run", "--uri", uri, "--key", "k", "--", "sh", "-c", "while [ ! -e done ]; do sleep 0.05; done"};
        JarCli.Running a = JarCli.start(dir, run);
        JarCli.Running b = JarCli.start(dir, run);
        JarCli.Running loser = (JarCli.Running) CompletableFuture.anyOf(
                a.process.onExit().thenApply(p -> a), b.process.onExit().thenApply(p -> b)).get(2, TimeUnit.MINUTES);
        JarCli.Running holder = loser == a ? b : a;
        JarCli.Result lost = loser.await();
        assertThat(lost.status()).as(lost.err()).isEqualTo(75);
        assertThat(lost.err().lines()).singleElement().asString()
                .contains("'k' is busy").contains("/" + holder.process.pid()).contains(" since ");
        assertThat(holder.process.isAlive()).isTrue();
        Files.createFile(dir.resolve("done"));
        assertThat(holder.await().status()).isZero();
    }

    /**
     * kill -9 of the holding latchkey: the OS lock dies with its JVM, so the key is free at once (the
     * lease's 10 minute TTL has not run out), and latchkey's guard kills the orphaned CMD.
     */
    @Test
    void killedHolderFreesTheLockAtOnceAndTakesItsJobAlong() throws Exception {
        JarCli.Running holder = JarCli.start(dir, "run", "--uri", uri, "--key", "k9", "--ttl", "10m", "--",
                "sh", "-c", "echo started; exec sleep 300");
        holder.awaitOut("started");
        List<ProcessHandle> children = holder.process.descendants().toList();
        holder.process.destroyForcibly();
        holder.process.waitFor();
        try {
            for (ProcessHandle child : children) child.onExit().get(ProcessTrees.SOON.toSeconds(), TimeUnit.SECONDS);
            JarCli.Result next = JarCli.run(dir, "run", "--uri", uri, "--key", "k9", "--wait", "0", "--", "echo", "ok");
            assertThat(next.status()).as(next.err()).isZero();
            assertThat(next.out()).isEqualTo("ok\n");
            assertThat(holder.err()).contains("latchkey's JVM ended while CMD ran: CMD's processes were killed");
        } finally {
            children.forEach(ProcessHandle::destroyForcibly);
        }
    }

    /**
     * The holder's latchkey is frozen (SIGSTOP: a suspended VM, a debugger) while its job writes on;
     * its lease runs out and a waiting run of the key takes it, but starts its CMD only once the
     * first job has ended (the job slot): when the first latchkey resumes, it finds the loss and kills
     * its job (76), and only then does the second job write. No line of the first job follows the second's start.
     */
    @Test
    void frozenHoldersJobNeverRunsBesideTheNext() throws Exception {
        Path log = dir.resolve("log");
        JarCli.Running first = JarCli.start(dir, "run", "--uri", uri, "--key", "frozen", "--ttl", "5s", "--",
                "sh", "-c", "while :; do echo A >> log; sleep 0.02; done");
        while (!Files.exists(log)) Thread.sleep(20); // polls the condition "the first job writes"
        signal("STOP", first.process.pid());
        JarCli.Running second = JarCli.start(dir, "run", "--uri", uri, "--key", "frozen", "--wait", "1m", "--ttl", "5s",
                "--", "sh", "-c", "echo B-start >> log");
        try {
            second.awaitErr("waiting for the processes of the previous job");
            signal("CONT", first.process.pid());
            assertThat(first.await().status()).isEqualTo(76);
            JarCli.Result next = second.await();
            assertThat(next.status()).as(next.err()).isZero();
            List<String> lines = Files.readAllLines(log);
            assertThat(lines.subList(lines.indexOf("B-start"), lines.size())).as("the log from the second job's start on")
                    .containsExactly("B-start");
        } finally {
            if (first.process.isAlive()) signal("CONT", first.process.pid());
            first.process.destroyForcibly();
            second.process.destroyForcibly();
        }
    }

    private static void signal(String name, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).start();
        assertThat(kill.waitFor()).isZero();
    }

    /** A JVM crash (SIGABRT: what a fatal error or -XX:+CrashOnOutOfMemoryError does) takes the job along too. */
    @Test
    void crashedHolderTakesItsJobAlong() throws Exception {
        JarCli.Running holder = JarCli.start(dir, "run", "--uri", uri, "--key", "crash", "--ttl", "10m", "--",
                "sh", "-c", "(setsid sh -c 'echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 600' &); exec sleep 600");
        ProcessHandle away = ProcessTrees.awaitPids(dir.resolve("pid"), holder.process.onExit()).get(0);
        try {
            signal("ABRT", holder.process.pid());
            holder.process.waitFor();
            away.onExit().get(ProcessTrees.SOON.toSeconds(), TimeUnit.SECONDS);
            JarCli.Result next = JarCli.run(dir, "run", "--uri", uri, "--key", "crash", "--", "true");
            assertThat(next.status()).as(next.err()).isZero();
        } finally {
            away.destroyForcibly();
        }
    }

    /**
     * CMD exits at once, leaving a process in a session of its own that writes a line a second later:
     * by default latchkey holds the lock until that process has exited too, as flock(1) would.
     */
    @Test
    void leftoversAreWaitedForBeforeTheRelease() throws Exception {
        JarCli.Result r = JarCli.run(dir, "run", "--uri", uri, "--key", "left", "--", "sh", "-c",
                "(setsid sh -c 'sleep 1; echo late > late.tmp; mv late.tmp late' &); echo done");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(dir.resolve("late")).as("the leftover's line, when latchkey exited").exists();
    }

    /** With --leftovers kill, what CMD left running is stopped (SIGTERM, then SIGKILL: it ignores SIGTERM) before the release. */
    @Test
    void leftoversKilledOnRequest() throws Exception {
        JarCli.Result r = JarCli.run(dir, "run", "--uri", uri, "--key", "left", "--leftovers", "kill", "--grace", "200ms",
                "--", "sh", "-c", "(setsid sh -c 'trap \"\" TERM; echo $$ > pid; exec sleep 600' &);"
                        + " while [ ! -s pid ]; do sleep 0.01; done");
        ProcessHandle away = ProcessHandle.of(Long.parseLong(Files.readString(dir.resolve("pid")).strip())).orElse(null);
        try {
            assertThat(r.status()).as(r.err()).isZero();
            assertThat(away == null || ProcessTrees.hasExited(away)).as("the leftover, when latchkey exited").isTrue();
        } finally {
            if (away != null) away.destroyForcibly();
        }
    }

    /**
     * The lease is broken while CMD runs; CMD ignores SIGTERM, and so does a process it double-forked
     * into a session of its own (no longer in CMD's tree): both are gone when latchkey exits 76.
     */
    @Test
    void lostLeaseKillsADoubleForkedTermIgnoringDescendant() throws Exception {
        JarCli.Running holder = JarCli.start(dir, "run", "--uri", uri, "--key", "away", "--ttl", "5s", "--", "sh", "-c",
                "trap '' TERM; (setsid sh -c 'trap \"\" TERM; echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 600' &);"
                        + " exec sleep 600");
        ProcessHandle away = ProcessTrees.awaitPids(dir.resolve("pid"), holder.process.onExit()).get(0);
        try {
            assertThat(away.parent().map(ProcessHandle::pid)).as("re-parented away from CMD's tree").isNotEqualTo(
                    java.util.Optional.of(holder.process.pid()));
            JarCli.Result release = JarCli.run(dir, "release", "--uri", uri, "--force", "away");
            assertThat(release.status()).as(release.err()).isZero();
            JarCli.Result r = holder.await();
            assertThat(r.status()).as(r.err()).isEqualTo(76);
            assertThat(r.err()).contains("CMD was terminated");
            assertThat(ProcessTrees.hasExited(away)).as("the double-forked descendant, when latchkey exited").isTrue();
        } finally {
            away.destroyForcibly();
        }
    }

    /** CMD and its child ignore SIGTERM and would sleep ten minutes: both are gone within seconds of the loss. */
    @Test
    void lostLeaseKillsTheWholeTreeAndExits76() throws Exception {
        JarCli.Running holder = JarCli.start(dir, "run", "--uri", uri, "--key", "lost", "--ttl", "5s", "--", "sh", "-c",
                "trap '' TERM; sleep 600 & echo $$ $! > pids.tmp; mv pids.tmp pids; wait");
        List<ProcessHandle> tree = ProcessTrees.awaitPids(dir.resolve("pids"), holder.process.onExit());
        try {
            long lostAt = System.nanoTime();
            JarCli.Result release = JarCli.run(dir, "release", "--uri", uri, "--force", "lost");
            assertThat(release.status()).as(release.err()).isZero();
            assertThat(release.out()).contains("released lock 'lost'");
            JarCli.Result r = holder.await();
            assertThat(r.status()).as(r.err()).isEqualTo(76);
            assertThat(r.err().lines()).singleElement().asString().contains("lost the lock 'lost'")
                    .contains("CMD was terminated");
            assertThat(tree).as("CMD and its child, when latchkey exited").allMatch(ProcessTrees::hasExited);
            assertThat(Duration.ofNanos(System.nanoTime() - lostAt)).as("from the break to latchkey's exit")
                    .isLessThan(ProcessTrees.SOON);
        } finally {
            tree.forEach(ProcessHandle::destroyForcibly);
        }
    }

    /** CMD dies of SIGTERM, its child ignores it and would sleep ten minutes: latchkey exits only once both are gone. */
    @Test
    void sigtermStopsTheWholeTreeAndReleases() throws Exception {
        JarCli.Running holder = JarCli.start(dir, "run", "--uri", uri, "--key", "sig", "--grace", "1s", "--", "sh", "-c",
                "(trap '' TERM; exec sleep 600) & echo $$ $! > pids.tmp; mv pids.tmp pids; wait");
        List<ProcessHandle> tree = ProcessTrees.awaitPids(dir.resolve("pids"), holder.process.onExit());
        try {
            long signalledAt = System.nanoTime();
            holder.process.destroy(); // SIGTERM
            assertThat(holder.await().status()).isEqualTo(128 + 15);
            assertThat(tree).as("CMD and its child, when latchkey exited").allMatch(ProcessTrees::hasExited);
            assertThat(Duration.ofNanos(System.nanoTime() - signalledAt)).as("from SIGTERM to latchkey's exit")
                    .isLessThan(ProcessTrees.SOON);
            JarCli.Result status = JarCli.run(dir, "status", "--uri", uri, "sig");
            assertThat(status.out()).contains("state    free");
        } finally {
            tree.forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void badUriIsOneLineAndStatus2() throws Exception {
        for (String bad : new String[] {"nosuch://x", "not a uri"}) {
            JarCli.Result r = JarCli.run(dir, "run", "--uri", bad, "--key", "k", "--", "true");
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.err().lines()).singleElement().asString().startsWith("latchkey: ")
                    .doesNotContain("Exception");
            assertThat(r.out()).isEmpty();
        }
        assertThat(JarCli.run(dir, "status", "--uri", "nosuch://x", "k").err())
                .contains("installed schemes").contains("file").contains("mem");
    }

    /** As {@link UriSecretsTest}, in the jar: with -v the backends' own logs go to stderr too. */
    @Test
    void userInfoNeverShowsVerboseOrNot() throws Exception {
        for (String uri : UriSecretsTest.URIS) {
            JarCli.Result r = JarCli.run(dir, "status", "-v", "--uri", uri, "k");
            assertThat(r.status()).as(r.err()).isIn(2, 69);
            UriSecretsTest.assertNoSecret(r.out() + "\n" + r.err(), "status -v --uri " + uri);
        }
    }

    @Test
    void backendsListsEveryShadedProvider() throws Exception {
        JarCli.Result r = JarCli.run(dir, "backends");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("file").contains("mem");
    }
}
