package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The timer starts lazily. Other tests of this JVM may well have started it already, so the
 * check runs {@link HeartbeatsProbe} in a JVM of its own, on this build's classes only.
 */
class HeartbeatsTest {

    @Test
    void loadingTheClassStartsNoTimerAndTheFirstSchedulerCallStartsItWithItsKeepAliveTick() throws Exception {
        String classpath = codeSource(Heartbeats.class) + File.pathSeparator + codeSource(HeartbeatsProbe.class);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", classpath, HeartbeatsProbe.class.getName())
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        // a few short lines: the pipe cannot fill, so waiting before reading cannot block the probe
        boolean finished = p.waitFor(2, TimeUnit.MINUTES);
        if (!finished) p.destroyForcibly();
        assertThat(finished).as("probe JVM finished").isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();

        assertThat(out.lines().toList()).containsExactly(
                "afterLoad.timerThread=false",
                "afterRuntime.timerThread=false renewers=0",
                "afterScheduler.timerThread=true",
                "afterScheduler.keepAliveTicks=1",
                "afterLater.keepAliveTicks=1");
    }

    private static String codeSource(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
