package dev.latchkey.tck.backends;

import dev.latchkey.file.FileConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The CAS contract on {@link FileConditionalStore}: each client is a new store object on the same directory. */
class FileConditionalStoreTest extends ConditionalStoreContract {
    @TempDir
    Path dir;

    @Override
    protected ConditionalStore newStore() {
        return new FileConditionalStore(dir);
    }
}
