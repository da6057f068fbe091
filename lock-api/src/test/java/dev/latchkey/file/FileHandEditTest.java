package dev.latchkey.file;

import static dev.latchkey.file.Machines.jvmOnBoot;
import static dev.latchkey.file.Machines.manager;
import static dev.latchkey.file.Machines.recordFile;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.engine.ConditionalStoreLockManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record file deleted by hand while this JVM has it mapped: the next operation works on the file
 * now at that path (a new one), as every other process does, not on the deleted one still mapped.
 */
class FileHandEditTest {
    @TempDir
    Path dir;

    @Test
    void aRecordDeletedByHandIsNoticedByAJvmThatHasItOpen() throws IOException {
        Host jvm = jvmOnBoot("boot-1");
        try (ConditionalStoreLockManager m = manager(jvm, dir); ConditionalStoreLockManager other = manager(jvm, dir)) {
            Lease first = m.tryAcquire("job").orElseThrow();
            first.release();
            Files.delete(recordFile(dir, "job"));

            Lease again = m.tryAcquire("job").orElseThrow(); // on the deleted file it would replace the old record
            assertThat(Files.exists(recordFile(dir, "job"))).isTrue();
            assertThat(other.inspect("job")).isPresent();
            again.release();
        }
    }
}
