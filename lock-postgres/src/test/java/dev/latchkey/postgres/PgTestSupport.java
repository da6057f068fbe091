package dev.latchkey.postgres;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** The test server (LATCHKEY_TEST_POSTGRES_URI, else one started by scripts/postgres.sh) and helpers. */
final class PgTestSupport {
    private PgTestSupport() {}

    static String uri() {
        return ExternalServer.uri("LATCHKEY_TEST_POSTGRES_URI", "postgres");
    }

    /** {@code base} with extra query parameters ({@code "mode=lease&poll=50ms"}). */
    static String with(String base, String params) {
        if (params == null || params.isEmpty()) return base;
        return base + (base.contains("?") ? "&" : "?") + params;
    }

    static LockManager open(String params) {
        return Latchkey.open(with(uri(), params), LockContext.defaults());
    }

    /** A plain JDBC session on the same database, as an administrator's psql would be. */
    static Connection jdbc(String uri) throws SQLException {
        PgSettings s = PgSettings.parse(LockUri.parse(uri));
        return DriverManager.getConnection(s.jdbcUrl, s.properties);
    }
}
