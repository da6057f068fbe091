package dev.latchkey.tck.backends;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The lock contract on {@code file://}: every manager of one test opens the same fresh directory. */
class FileTckTest extends LockManagerContract {
    @TempDir
    Path dir;

    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open("file://" + dir, context);
    }

    @Override
    protected String uriForOtherProcesses() {
        return "file://" + dir;
    }
}
