package dev.latchkey.file;

import static dev.latchkey.file.Machines.jvmOnBoot;
import static dev.latchkey.file.Machines.manager;
import static dev.latchkey.file.Machines.recordFile;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.engine.ConditionalStoreLockManager;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files of a key in use stay open however many keys the JVM has touched: past the limit of idle
 * open keys, the least recently used idle ones are closed, never the one just used (which would then be
 * reopened and mapped again on each of its calls: three times the cost of an acquire+release, measured).
 */
class FileKeyCacheTest {
    @TempDir
    Path dir;

    @Test
    void aKeyInUseStaysOpenAfterManyOthersWereTouched() {
        try (ConditionalStoreLockManager m = manager(jvmOnBoot("boot-1"), dir)) {
            for (int i = 0; i < 400; i++) m.tryAcquire("cold-" + i).orElseThrow().release();
            Path hot = lck("hot");
            for (int round = 0; round < 20; round++) {
                m.tryAcquire("hot").orElseThrow().release();
                assertThat(KeyFiles.openNow()).as("open keys after round %d of the busy key", round).contains(hot);
            }
            assertThat(KeyFiles.openNow()).as("keys open, none of them held").hasSizeLessThanOrEqualTo(256);
            assertThat(KeyFiles.openNow()).as("the least recently used idle key").doesNotContain(lck("cold-0"));
        }
    }

    private Path lck(String key) {
        Path lease = recordFile(dir, key);
        return lease.resolveSibling(lease.getFileName().toString().replaceFirst("\\.lease$", ".lck"));
    }
}
