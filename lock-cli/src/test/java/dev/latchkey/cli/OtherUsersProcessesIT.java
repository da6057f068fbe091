package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job that runs part of its work as another user (through {@code sudo}, a set-user-ID program, a
 * container runtime's client) holds processes that latchkey, run by an ordinary user, may not signal.
 * On a loss latchkey names them and exits 76, and never claims that the job was terminated before
 * anyone else could get the lock. Here latchkey runs as an unprivileged user, and CMD starts a
 * set-user-ID program that becomes root altogether, as {@code sudo} does, and sleeps. Needs root
 * and gcc to make that program and the user (CI runs as root, and gcc is on its machine); elsewhere
 * the test says why it did not run.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // hang guard only
class OtherUsersProcessesIT {
    private static final String USER = "latchkey-test-user";

    @TempDir
    Path dir;

    @Test
    void aLossNamesTheProcessesLatchkeyMayNotSignal() throws Exception {
        Assumptions.assumeTrue(run("id", "-u").trim().equals("0"),
                "needs root, to make a set-user-ID program and a user to run latchkey as");
        if (!run("id", "-u", USER).matches("\\d+\\s*")) run("useradd", "--system", "--no-create-home", USER);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        // what sudo does: real and effective uid root (a set-user-ID program alone keeps the caller's
        // real uid, and with it the caller's right to signal it)
        Path source = dir.resolve("root-sleep.c");
        Files.writeString(source, "#include <unistd.h>\nint main(void) { if (setuid(0)) return 1;"
                + " execl(\"/bin/sleep\", \"sleep\", \"600\", (char *) 0); return 1; }\n");
        Path rootSleep = dir.resolve("root-sleep");
        String built = run("gcc", "-o", rootSleep.toString(), source.toString());
        Assumptions.assumeTrue(Files.isExecutable(rootSleep), "needs gcc to build a set-user-ID program: " + built);
        run("chmod", "u+s", rootSleep.toString()); // Java cannot set the set-user-ID bit
        String uri = "file://" + dir.resolve("locks");
        String cmd = String.join(" ", JarCli.JAVA, String.join(" ", JarCli.JVM_OPTIONS), "-jar", JarCli.JAR.toString(),
                "run", "--uri", uri, "--key", "k", "--ttl", "5s", "--", "sh", "-c",
                "'./root-sleep 600 & echo $! > pid.tmp; mv pid.tmp pid; wait'");
        Path err = dir.resolve("holder.err");
        Process holder = new ProcessBuilder("su", "-s", "/bin/sh", USER, "-c", cmd).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(dir.resolve("holder.out").toFile()).redirectError(err.toFile()).start();
        ProcessHandle asRoot = ProcessTrees.awaitPids(dir.resolve("pid"), holder.onExit()).get(0);
        try {
            assertThat(asRoot.info().user()).as("the set-user-ID program's owner").hasValue("root");
            JarCli.Result release = JarCli.run(dir, "release", "--uri", uri, "--force", "k");
            assertThat(release.status()).as(release.err()).isZero();
            assertThat(holder.waitFor(3, TimeUnit.MINUTES)).as("latchkey exited").isTrue();
            String said = Files.readString(err, StandardCharsets.UTF_8);
            assertThat(holder.exitValue()).as(said).isEqualTo(76);
            assertThat(said).contains("could not kill process " + asRoot.pid())
                    .contains("CMD was terminated, except processes of CMD that latchkey may not signal")
                    .doesNotContain("before anyone else could get the lock");
            assertThat(ProcessTrees.hasExited(asRoot)).as("root's process, which latchkey could not stop").isFalse();
        } finally {
            asRoot.destroyForcibly();
            holder.destroyForcibly();
        }
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }
}
