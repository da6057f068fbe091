package dev.latchkey.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full file system under {@code file://}: a new key's {@code NAME.lease} cannot get its blocks,
 * and the acquisition fails with a retriable {@link LockBackendException} saying so — not with the
 * {@link InternalError} of touching a mapped page that the file system could not back. Needs a
 * tiny tmpfs, so it runs as root only (mount); elsewhere it is skipped, saying why.
 */
class FileFullDiskTest {

    @Test
    void aNewKeyOnAFullFileSystemIsARetriableBackendError(@TempDir Path dir) throws Exception {
        Path mount = dir.resolve("tiny");
        Files.createDirectories(mount);
        Assumptions.assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mount.toString()),
                "mounting a 512 KiB tmpfs needs root (mount -t tmpfs): test skipped");
        try (LockManager locks = Latchkey.open("file://" + mount)) {
            locks.tryAcquire("warm-up").orElseThrow().release(); // the directory's own files exist
            fill(mount.resolve("filler"));
            Throwable thrown = catchThrowable(() -> locks.tryAcquire("new-key"));
            assertThat(thrown).as("tryAcquire of a new key on a full file system").isExactlyInstanceOf(LockBackendException.class)
                    .hasMessageContaining("No space left on device").hasMessageContaining("free space");
            assertThat(((LockBackendException) thrown).isRetriable()).isTrue();

            Files.delete(mount.resolve("filler"));
            Lease lease = locks.tryAcquire("new-key").orElseThrow(() -> new AssertionError("the same key once there is space again"));
            lease.release(); // no key of this test stays open in the JVM
        } finally {
            run("umount", "-l", mount.toString());
        }
    }

    /** Writes zeros until the file system is full. */
    private static void fill(Path file) throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            byte[] block = new byte[1024];
            while (true) out.write(block);
        } catch (IOException full) {
            // no space left: what the test wants
        }
    }

    private static boolean run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    }
}
