package dev.latchkey.clickhouse;

import com.clickhouse.jdbc.DataSourceImpl;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Properties;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The real ClickHouse server of the tests: {@code LATCHKEY_TEST_CLICKHOUSE_URI} if set; else, where
 * the {@code containers} route, the official image through Testcontainers; else the local chDB server of
 * {@code scripts/clickhouse.sh} (our CI). Plus a plain-HTTP SQL channel that bypasses the backend,
 * so tests can plant and inspect rows independently of the code under test.
 */
final class ClickHouseTestServer {
    static final String ENV = "LATCHKEY_TEST_CLICKHOUSE_URI";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final String IMAGE = System.getProperty("latchkey.test.clickhouse.image", "clickhouse/clickhouse-server:26.7");

    private ClickHouseTestServer() {}

    /** A server started for one test; {@link #stop()} ends it. */
    interface Private {
        String uri();

        void stop();
    }

    /**
     * A server of a test class's own, as {@code @RegisterExtension static final PrivateServer server}:
     * started before the class's first test, stopped after its last.
     */
    static final class PrivateServer implements BeforeAllCallback, AfterAllCallback {
        private Private server;

        @Override
        public void beforeAll(ExtensionContext context) throws IOException {
            server = startPrivate();
        }

        @Override
        public void afterAll(ExtensionContext context) {
            if (server != null) server.stop();
        }

        String uri() {
            return server.uri();
        }
    }

    /** The shared server's URI (database included, no parameters). */
    static String base() {
        return ExternalServer.uri(ENV, "clickhouse", () -> startContainer().uri());
    }

    /** A server of its own, for a test that stops it. */
    static Private startPrivate() throws IOException {
        if (ExternalServer.containers()) return startContainer();
        Path dir = Files.createTempDirectory("latchkey-clickhouse-private-");
        String uri = ExternalServer.script("clickhouse", "start", dir.toString());
        return new Private() {
            @Override public String uri() { return uri; }
            @Override public void stop() { ExternalServer.script("clickhouse", "stop", dir.toString()); }
        };
    }

    private static Private startContainer() {
        GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withLabel(ExternalServer.CONTAINER_LABEL, "true")
                .withExposedPorts(8123)
                .withEnv("CLICKHOUSE_DB", "latchkey")
                .withEnv("CLICKHOUSE_USER", "latchkey")
                .withEnv("CLICKHOUSE_PASSWORD", "latchkey-test")
                .waitingFor(Wait.forHttp("/ping").forStatusCode(200));
        c.start();
        String uri = "clickhouse://latchkey:latchkey-test@" + c.getHost() + ":" + c.getMappedPort(8123) + "/latchkey";
        return new Private() {
            @Override public String uri() { return uri; }
            @Override public void stop() { c.stop(); }
        };
    }

    /** The server's URI with {@code params} ({@code a=b&c=d}) added. */
    static String uri(String params) {
        String base = base();
        return base + (base.contains("?") ? "&" : "?") + params;
    }

    /** The database the URI names. */
    static String database() {
        String path = LockUri.parse(base()).path();
        return path.length() > 1 ? path.substring(1) : "default";
    }

    /**
     * A HikariCP pool of {@code size} connections, kept open, around ClickHouse's JDBC driver's
     * {@code DataSource} on the shared server, as an application configures one (the driver's
     * defaults otherwise: its client retries, which each statement of the backend switches off).
     */
    static HikariDataSource jdbcPool(int size) {
        LockUri u = LockUri.parse(base());
        Properties properties = new Properties();
        properties.setProperty("user", u.user().orElse("default"));
        properties.setProperty("password", u.password().orElse(""));
        HikariConfig config = new HikariConfig();
        config.setDataSource(new DataSourceImpl("jdbc:clickhouse:http://" + u.host() + ":" + u.port().orElse(8123) + "/"
                + database(), properties));
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(Duration.ofSeconds(5).toMillis());
        return new HikariDataSource(config);
    }

    /** Runs one statement over HTTP on the server of {@code uri}; returns its TSV output. */
    static String sql(String uri, String statement) {
        LockUri u = LockUri.parse(uri);
        boolean ssl = u.booleanParam("ssl", false);
        String endpoint = (ssl ? "https" : "http") + "://" + u.host() + ":" + u.port().orElse(ssl ? 8443 : 8123) + "/";
        String auth = u.user().orElse("default") + ":" + u.password().orElse("");
        HttpRequest request = HttpRequest.newBuilder(URI.create(endpoint))
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(auth.getBytes(StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(statement))
                .build();
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("ClickHouse answered " + response.statusCode() + " to " + statement + ": " + response.body());
            }
            return response.body().strip();
        } catch (IOException e) {
            throw new IllegalStateException("cannot reach ClickHouse for " + statement, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static String sql(String statement) {
        return sql(base(), statement);
    }
}
