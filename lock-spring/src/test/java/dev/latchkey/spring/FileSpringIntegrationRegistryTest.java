package dev.latchkey.spring;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** Spring Integration's ported registry tests on {@code file://}. */
class FileSpringIntegrationRegistryTest extends SpringIntegrationDifferentClientTests {
    @TempDir
    Path dir;

    @Override
    String uri() {
        return dir.toUri().toString();
    }
}
