package dev.latchkey.postgres.shared;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HexFormat;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The test server and helpers. The server is {@code LATCHKEY_TEST_POSTGRES_URI} (any existing
 * server) if set; else, on the {@code containers} route ({@link ExternalServer#containers()}), a
 * PostgreSQL 15 container of the locally built image (Testcontainers, stopped at JVM exit); else a
 * local server started by {@code scripts/postgres.sh}.
 */
public final class PgTestSupport {
    public static final String ENV = "LATCHKEY_TEST_POSTGRES_URI";
    /**
     * mode=lease, in a schema of its own: a schema holds the locks of one mode (its registry says
     * which), and the advisory tests use {@code public}.
     */
    public static final String LEASE = "mode=lease&schema=latchkey_lease";
    /** The lease table of {@link #LEASE}, for SQL. */
    public static final String LEASE_TABLE = "latchkey_lease.latchkey_leases";

    private PgTestSupport() {}

    public static String uri() {
        return ExternalServer.uri(ENV, "postgres", PgTestSupport::startContainer);
    }

    @SuppressWarnings("resource") // Testcontainers' reaper stops it when the JVM exits
    private static String startContainer() {
        PostgreSQLContainer c = newContainer();
        c.start();
        return uri(c);
    }

    /**
     * PostgreSQL 15 in a container (not started), set up like the script's server: role
     * {@code latchkey} (not a superuser, so permission tests mean something) owning database
     * {@code latchkey}, an unprivileged {@code latchkey_peer} with the same random password, 200
     * connections (advisory mode pins one per held lease), default durability. The image is
     * {@code -Dlatchkey.test.postgres.image}, else the one {@code scripts/images/build.sh postgres}
     * builds from Debian's {@code postgresql-15}.
     */
    public static PostgreSQLContainer newContainer() {
        byte[] secret = new byte[16];
        new SecureRandom().nextBytes(secret);
        String password = HexFormat.of().formatHex(secret);
        String roles = "CREATE ROLE latchkey LOGIN PASSWORD '" + password + "';\n"
                + "CREATE ROLE latchkey_peer LOGIN PASSWORD '" + password + "';\n"
                + "ALTER DATABASE latchkey OWNER TO latchkey;\n";
        String image = ExternalServer.image("latchkey.test.postgres.image", "postgres");
        return new PostgreSQLContainer(DockerImageName.parse(image).asCompatibleSubstituteFor("postgres"))
                .withLabel(ExternalServer.CONTAINER_LABEL, "true")
                .withDatabaseName("latchkey")
                .withUsername("postgres")
                .withPassword(password)
                .withCopyToContainer(Transferable.of(roles), "/docker-entrypoint-initdb.d/latchkey-roles.sql")
                // replaces the module's default command (which turns fsync off): fencing tokens and
                // benchmarks should cost what they cost on a real server
                .withCommand("postgres", "-c", "max_connections=200");
    }

    /** The URI of a started {@link #newContainer()}, as role {@code latchkey}. */
    public static String uri(PostgreSQLContainer c) {
        return "postgres://latchkey:" + c.getPassword() + "@" + c.getHost() + ":" + c.getMappedPort(PostgreSQLContainer.POSTGRESQL_PORT)
                + "/latchkey";
    }

    /** {@code base} with extra query parameters ({@code "fencing=false&poll=50ms"}). */
    public static String with(String base, String params) {
        if (params == null || params.isEmpty()) return base;
        return base + (base.contains("?") ? "&" : "?") + params;
    }

    public static LockManager open(String params) {
        return Latchkey.open(with(uri(), params), LockContext.defaults());
    }

    /**
     * A HikariCP pool on the test server that opens connections only on demand (the DataSource
     * route's tests of what a manager takes and ends): at most {@code size} connections,
     * {@code getConnection()} waiting at most {@code wait}.
     */
    public static HikariDataSource hikari(int size, java.time.Duration wait) {
        HikariConfig config = hikariConfig(size, wait);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    /**
     * A HikariCP pool on the test server configured as an application would: HikariCP's default of a
     * fixed size, {@code size} connections kept open. A pool that grows on demand can leave one of
     * two threads that start waiting at once without a connection for its whole {@code wait}
     * (docs/backends/postgres.md): the contract's racers start together.
     */
    public static HikariDataSource fixedSizeHikari(int size, java.time.Duration wait) {
        return new HikariDataSource(hikariConfig(size, wait));
    }

    /** The configuration of {@link #hikari} and {@link #fixedSizeHikari}, for a test that sets more. */
    public static HikariConfig hikariConfig(int size, java.time.Duration wait) {
        PgSettings s = PgSettings.parse(LockUri.parse(uri()));
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(s.jdbcUrl);
        config.setDataSourceProperties(s.properties);
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(wait.toMillis());
        config.setPoolName("application");
        return config;
    }

    /** A plain JDBC session on the same database, as an administrator's psql would be. */
    public static Connection jdbc(String uri) throws SQLException {
        PgSettings s = PgSettings.parse(LockUri.parse(uri));
        return DriverManager.getConnection(s.jdbcUrl, s.properties);
    }
}
