package dev.latchkey.tck.backends;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.tck.MultiProcessContention;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual exclusion on {@code file://} across operating-system processes: four JVMs contend on one
 * key for 25 rounds each; no two critical sections overlap, no update of a shared counter is lost,
 * and sections are entered in fencing-token order. ({@link FileTckTest} adds a killed-holder test.)
 */
class FileMultiProcessTest {
    @TempDir
    Path locks;
    @TempDir
    Path work;

    @Test
    void fourProcessesNeverOverlap() throws Exception {
        int processes = 4;
        int rounds = 25;
        MultiProcessContention.Report report = MultiProcessContention.run(
                "file://" + locks, "multi/process key", processes, rounds, true, work, Duration.ofMinutes(4));

        assertThat(report.violations()).isEmpty();
        assertThat(report.sections()).isEqualTo(processes * rounds);
        assertThat(report.counter()).isEqualTo(processes * rounds);
        assertThat(report.tokens()).isSorted().doesNotHaveDuplicates();
    }
}
