package dev.latchkey.tck.backends;

import dev.latchkey.file.FileConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.StoreFaultContract;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The fault contract on {@link FileConditionalStore} (with its holder liveness): clients of one test share a
 * directory. Not a {@code @TempDir}: the engine's background withdrawals and release retries may
 * still write there for a while after a test, so the directory lives under {@code target/}.
 */
class FileStoreFaultTest extends StoreFaultContract {
    private final Path dir = Path.of("target", "file-store-faults", UUID.randomUUID().toString());

    @Override
    protected ConditionalStore newStore() {
        return new FileConditionalStore(dir);
    }
}
