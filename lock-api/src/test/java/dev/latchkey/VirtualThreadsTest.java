package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Virtual threads contending on {@code mem://} and {@code file://} finish, with one carrier
 * thread and no pinning ({@link VirtualThreadsProbe}, in a child JVM of the JDK named by
 * {@code -Dlatchkey.test.virtualThreadsJdk}, Java 21 or later; the POM points it at the Temurin 25
 * of our machines). Without such a JDK the test fails, saying so.
 *
 * <p>What it proves, on that JDK: 500 virtual threads per backend sharing one carrier (and no
 * compensating carrier) all get and release their leases, with no key held twice and rising
 * fencing tokens, also with the manager's own threads virtual; no {@code jdk.VirtualThreadPinned}
 * event; and no virtual thread waits in or contends for a monitor ({@code jdk.JavaMonitorWait},
 * {@code jdk.JavaMonitorEnter}) — which Java 24+ no longer pins on (JEP 491) but Java 21–23 does, so
 * this fails on 25 as well for the old {@code Object.wait} of {@code mem://} waiters. What it does
 * not see: an uncontended {@code synchronized} held across blocking I/O, which pins on Java 21–23
 * and leaves no event on 24+; {@link NoMonitorsTest} keeps monitors out of the sources for that.
 */
class VirtualThreadsTest {
    private static final String THREADS = "500";
    private static final String KEYS = "25";

    @TempDir Path dir;

    @Test
    void virtualThreadsOnOneCarrierAllGetTheirLeasesWithoutPinning() throws Exception {
        String jdk = System.getProperty("latchkey.test.virtualThreadsJdk", "");
        Path java = Path.of(jdk, "bin", "java");
        assertThat(!jdk.isEmpty() && Files.isExecutable(java))
                .as("a JDK 21 or later for the virtual-thread test at -Dlatchkey.test.virtualThreadsJdk=" + jdk
                        + ": install one (our machines have Temurin 25 at /usr/lib/jvm/temurin-25-jdk-amd64) and pass its home")
                .isTrue();
        String classpath = codeSource(Latchkey.class) + File.pathSeparator + codeSource(VirtualThreadsProbe.class);
        Path out = dir.resolve("probe.out");
        Process p = new ProcessBuilder(java.toString(),
                "-Djdk.virtualThreadScheduler.parallelism=1", "-Djdk.virtualThreadScheduler.maxPoolSize=1",
                "-cp", classpath, VirtualThreadsProbe.class.getName(),
                THREADS, KEYS, "mem://virtual-threads-" + System.nanoTime(), "file://" + dir.resolve("locks"))
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        p.getOutputStream().close();
        boolean finished = p.waitFor(5, TimeUnit.MINUTES);
        if (!finished) p.destroyForcibly().waitFor();
        String output = Files.readString(out);
        assertThat(finished).as("probe JVM finished: " + output).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        List<String> lines = output.lines().toList();
        assertThat(lines).anyMatch(l -> l.startsWith("mem: " + THREADS + "/" + THREADS + " virtual threads finished"))
                .anyMatch(l -> l.startsWith("file: " + THREADS + "/" + THREADS + " virtual threads finished"))
                .anyMatch(l -> l.matches("jdk\\.VirtualThreadPinned events: 0, monitor waits and contention on virtual"
                        + " threads: 0 \\(Java (2[1-9]|[3-9][0-9]), carrier threads: 1\\)"));
    }

    private static String codeSource(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
