package dev.latchkey.spring;

import java.util.UUID;

/** Spring Integration's ported registry tests on {@code mem://}: every manager of a test names the same store. */
class MemSpringIntegrationRegistryTest extends SpringIntegrationDifferentClientTests {
    private final String uri = "mem://spring-integration-" + UUID.randomUUID();

    @Override
    String uri() {
        return uri;
    }
}
