package dev.latchkey.shedlock;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** ShedLock's test kit on {@code file://}. */
class FileShedLockTest extends ShedLockKit {
    @TempDir
    Path dir;

    @Override
    protected String uri() {
        return dir.toUri().toString();
    }
}
