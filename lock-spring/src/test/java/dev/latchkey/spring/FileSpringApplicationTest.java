package dev.latchkey.spring;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

/** The application scenarios on {@code file://}, a fresh directory per test. */
class FileSpringApplicationTest extends SpringApplicationScenarios {
    @Override
    String uri() {
        try {
            return Files.createTempDirectory("latchkey-spring-").toUri().toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
