package dev.latchkey.postgres.shared;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** URI handling: no server needed. */
class PgSettingsTest {

    private static PgSettings parse(String uri, Map<String, String> env) {
        return PgSettings.parse(LockUri.parse(uri), env);
    }

    @Test
    void fullUriBecomesJdbcUrlAndProperties() {
        PgSettings s = parse("postgresql://app:s3cret@db.example:6543/locks?mode=lease&schema=ops&table=my_locks"
                + "&sslmode=verify-full&ApplicationName=cron", Map.of());
        assertThat(s.mode).isEqualTo(PgSettings.Mode.LEASE);
        assertThat(s.jdbcUrl).isEqualTo("jdbc:postgresql://db.example:6543/locks");
        assertThat(s.properties).containsEntry("user", "app").containsEntry("password", "s3cret")
                .containsEntry("sslmode", "verify-full").containsEntry("ApplicationName", "cron")
                .doesNotContainKeys("mode", "schema", "table");
        assertThat(s.table).isEqualTo("\"ops\".\"my_locks\"");
        assertThat(s.endpoint).isEqualTo("db.example:6543/locks");
        assertThat(s.toString()).doesNotContain("s3cret").contains("****");
    }

    @Test
    void defaultsAreAdvisoryModeOnPublicSchema() {
        PgSettings s = parse("postgres://app@localhost/locks", Map.of("PGPASSWORD", "from-env"));
        assertThat(s.mode).isEqualTo(PgSettings.Mode.ADVISORY);
        assertThat(s.table).isEqualTo("\"public\".\"latchkey_advisory\"");
        assertThat(s.jdbcUrl).isEqualTo("jdbc:postgresql://localhost:5432/locks");
        assertThat(s.properties).containsEntry("password", "from-env").containsEntry("ApplicationName", "latchkey");
        assertThat(s.registry).isEqualTo("\"public\".\"latchkey_registry\"");
        // well inside the default TTL's renewal window (renewed after 20 s, valid for 48 s): room for three more tries
        assertThat(s.timeout).isEqualTo(java.time.Duration.ofSeconds(5));
    }

    @Test
    void unknownModeParameterOrIdentifierIsRefusedWithoutLeakingThePassword() {
        assertThatThrownBy(() -> parse("postgres://u:hunter2@h/db?mode=table", Map.of()))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("mode")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> parse("postgres://u:hunter2@h/db?ttl=5s", Map.of()))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("ttl")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> parse("postgres://u:hunter2@h/db?table=x;drop", Map.of()))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("table")
                .hasMessageNotContaining("hunter2");
    }

    @Test
    void bothSchemesAreRegisteredAndDescribedMasked() {
        for (String scheme : new String[] {"postgres", "postgresql"}) {
            try (LockManager m = Latchkey.open(scheme + "://u:hunter2@127.0.0.1:1/db?mode=lease")) {
                assertThat(m.description()).startsWith(scheme + "://").doesNotContain("hunter2");
            }
        }
    }

    @Test
    void unreachableServerIsRetriableAndNamesTheEndpointNotThePassword() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        for (String mode : new String[] {"advisory", "lease"}) {
            try (LockManager m = Latchkey.open("postgres://u:hunter2@127.0.0.1:" + port + "/db?mode=" + mode)) {
                assertThatThrownBy(() -> m.tryAcquire("k"))
                        .isExactlyInstanceOf(LockBackendException.class)
                        .hasMessageContaining("127.0.0.1:" + port + "/db")
                        .hasMessageNotContaining("hunter2")
                        .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isTrue());
            }
        }
    }
}
