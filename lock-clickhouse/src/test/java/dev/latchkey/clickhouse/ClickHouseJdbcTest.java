package dev.latchkey.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.clickhouse.jdbc.DataSourceImpl;
import com.zaxxer.hikari.HikariDataSource;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What only the JDBC route does, against the real server: its parameters (sent as {@code param_}
 * settings) arrive verbatim, its server errors keep their verdict (retriable or not), and a data
 * source that cannot carry the protocol's settings — another driver's, or none on the class path —
 * is refused with a clear error, never used without them.
 */
class ClickHouseJdbcTest {
    private static final String TABLE = "jdbc_" + UUID.randomUUID().toString().substring(0, 8);
    private static HikariDataSource pool;

    @BeforeAll
    static void openPool() {
        pool = ClickHouseTestServer.jdbcPool(4);
    }

    @AfterAll
    static void closePool() {
        pool.close();
    }

    private static ClickHouseLocks.Options options() {
        return ClickHouseLocks.options().database(ClickHouseTestServer.database()).table(TABLE)
                .settle(Duration.ofMillis(150)).stale(Duration.ofSeconds(120));
    }

    /** Keys and metadata written through JDBC read back the same through the URI route, and the other way. */
    @Test
    void hostileKeysAndMetadataArriveVerbatim() {
        try (LockManager jdbc = ClickHouseLocks.open(pool, options());
             LockManager byUri = Latchkey.open(ClickHouseTestServer.uri("table=" + TABLE + "&settle=150ms&stale=120s"))) {
            for (String key : List.of("it's", "back\\slash", "a\\nb", "trailing\\", "q\\'\\\"", "{key:String}", "a' OR 1=1 --",
                    "\u00e9t\u00e9/\ud83d\udd12", "%_", "a&param_key=b", "x=y#z")) {
                LeaseOptions options = LeaseOptions.ttl(Duration.ofSeconds(30)).withOwner("o\\'&" + key)
                        .withMetadata(Map.of("note", key));
                try (Lease lease = jdbc.tryAcquire(key, options).orElseThrow(() -> new AssertionError(key))) {
                    LockInfo seen = byUri.inspect(key).orElseThrow(() -> new AssertionError(key));
                    assertThat(seen.key()).isEqualTo(key);
                    assertThat(seen.owner()).isEqualTo("o\\'&" + key);
                    assertThat(seen.metadata()).isEqualTo(Map.of("note", key));
                    assertThat(seen.leaseId()).isEqualTo(lease.leaseId());
                    assertThat(jdbc.list(key).stream().map(LockInfo::key)).as(key).containsExactly(key);
                }
                assertThat(byUri.inspect(key)).as(key).isEmpty();
                try (Lease lease = byUri.tryAcquire(key, options).orElseThrow(() -> new AssertionError(key))) {
                    assertThat(jdbc.inspect(key).map(LockInfo::leaseId)).as(key).contains(lease.leaseId());
                    assertThat(jdbc.tryAcquire(key, options)).as(key).isEmpty();
                }
            }
        }
    }

    /** The server's error code travels in the driver's SQLException: a wrong password is not worth retrying. */
    @Test
    void wrongPasswordIsANonRetriableErrorWithoutTheSecret() {
        LockUri u = LockUri.parse(ClickHouseTestServer.base());
        Properties properties = new Properties();
        properties.setProperty("user", u.user().orElse("default"));
        properties.setProperty("password", "wr0ngS3cret");
        DataSource wrong = new DataSourceImpl("jdbc:clickhouse:http://" + u.host() + ":" + u.port().orElse(8123) + "/", properties);
        assertThatThrownBy(() -> ClickHouseLocks.open(wrong, options()))
                .isInstanceOf(LockBackendException.class)
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse())
                .message().contains("DataSource").doesNotContain("wr0ngS3cret");
    }

    /** A statement that is not the driver's cannot carry no-retry, async_insert=0 and the timeouts: refused before it runs. */
    @Test
    void aDataSourceOfAnotherDriverIsRefused() {
        List<String> ran = new ArrayList<>();
        Statement statement = (Statement) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Statement.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "isWrapperFor" -> false;
                    case "close" -> null;
                    default -> {
                        ran.add(method.getName());
                        throw new AssertionError("ran " + method.getName());
                    }
                });
        Connection connection = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "createStatement" -> statement;
                    case "close" -> null;
                    default -> throw new AssertionError("called " + method.getName());
                });
        DataSource other = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) return connection;
                    throw new AssertionError("called " + method.getName());
                });
        assertThatThrownBy(() -> ClickHouseLocks.open(other, options()))
                .isInstanceOf(LockBackendException.class)
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse())
                .hasMessageContaining("com.clickhouse:clickhouse-jdbc");
        assertThat(ran).isEmpty();
    }

    /**
     * Without the optional driver on the class path (the URI route's users need not have it), the
     * JDBC route says what to add, instead of a {@code NoClassDefFoundError}: this module's classes,
     * loaded with the test class path minus the driver's jars.
     */
    @Test
    void withoutTheDriverTheJdbcRouteSaysWhatToAdd() throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (!name.startsWith("clickhouse-jdbc-") && !name.startsWith("jdbc-v2-")) urls.add(Path.of(entry).toUri().toURL());
        }
        try (URLClassLoader withoutDriver = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Class<?> locks = withoutDriver.loadClass(ClickHouseLocks.class.getName());
            Class<?> optionsClass = withoutDriver.loadClass(ClickHouseLocks.Options.class.getName());
            Object options = locks.getMethod("options").invoke(null);
            assertThatThrownBy(() -> {
                try {
                    locks.getMethod("open", DataSource.class, optionsClass).invoke(null, pool, options);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            }).isInstanceOf(IllegalStateException.class).hasMessageContaining("com.clickhouse:clickhouse-jdbc 0.10.0");
        }
    }
}
