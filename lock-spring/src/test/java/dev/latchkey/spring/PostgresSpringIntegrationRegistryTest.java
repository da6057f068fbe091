package dev.latchkey.spring;

import dev.latchkey.tck.ExternalServer;
import org.junit.jupiter.api.Nested;

/**
 * Spring Integration's ported registry tests on PostgreSQL, in both modes, on the test server
 * ({@code LATCHKEY_TEST_POSTGRES_URI}, else one started by {@code scripts/postgres.sh}).
 */
class PostgresSpringIntegrationRegistryTest {
    static String server() {
        return ExternalServer.uri("LATCHKEY_TEST_POSTGRES_URI", "postgres");
    }

    /** Advisory mode: a silent holder's session is ended by the server (its idle limit) soon after the TTL. */
    @Nested
    class Advisory extends SpringIntegrationDifferentClientTests {
        @Override
        String uri() {
            return ExternalServer.withParam(server(), "mode", "advisory");
        }
    }

    /** Lease mode, in a schema of its own (a schema holds the locks of one mode). */
    @Nested
    class Lease extends SpringIntegrationDifferentClientTests {
        @Override
        String uri() {
            return ExternalServer.withParam(ExternalServer.withParam(server(), "mode", "lease"), "schema", "latchkey_spring_lease");
        }
    }
}
