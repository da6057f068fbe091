package dev.latchkey.shedlock;

import dev.latchkey.tck.ExternalServer;
import org.junit.jupiter.api.Nested;

/**
 * ShedLock's test kit on PostgreSQL, in both modes, on the server the project's tests share
 * ({@code LATCHKEY_TEST_POSTGRES_URI}, else {@code scripts/postgres.sh}): a missing server fails.
 */
class PostgresShedLockTest {
    static String server() {
        return ExternalServer.uri("LATCHKEY_TEST_POSTGRES_URI", "postgres");
    }

    @Nested
    class Advisory extends ShedLockKit {
        @Override
        protected String uri() {
            return ExternalServer.withParam(server(), "mode", "advisory");
        }
    }

    @Nested
    class LeaseMode extends ShedLockKit {
        /** In a schema of its own: a schema keeps its locks one way. */
        @Override
        protected String uri() {
            return ExternalServer.withParam(ExternalServer.withParam(server(), "mode", "lease"), "schema", "latchkey_shedlock_lease");
        }
    }
}
