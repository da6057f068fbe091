package dev.latchkey.example.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The URI, parsed once; no password in any description or message. */
class RedisSettingsTest {
    private static final String SECRET = "s3cr3t-p4ss";

    @Test
    void parsesEveryPart() {
        RedisSettings s = RedisSettings.parse(LockUri.parse(
                "redis://app:" + SECRET + "@cache.example:6380/3?prefix=jobs&timeout=500ms&poll=20ms&requireAof=false"));
        assertThat(s.host()).isEqualTo("cache.example");
        assertThat(s.port()).isEqualTo(6380);
        assertThat(s.database()).isEqualTo(3);
        assertThat(s.user()).contains("app");
        assertThat(s.password()).contains(SECRET);
        assertThat(s.prefix()).isEqualTo("jobs");
        assertThat(s.timeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(s.poll()).isEqualTo(Duration.ofMillis(20));
        assertThat(s.requireAof()).isFalse();
        assertThat(s.toString()).doesNotContain(SECRET).doesNotContain("app").contains("cache.example:6380/3");
        assertThat(s.describe()).isEqualTo(s.toString());
    }

    @Test
    void defaultsAndThePasswordOnlyForm() {
        RedisSettings s = RedisSettings.parse(LockUri.parse("redis://:" + SECRET + "@127.0.0.1"));
        assertThat(s.port()).isEqualTo(6379);
        assertThat(s.database()).isZero();
        assertThat(s.user()).isEmpty();
        assertThat(s.password()).contains(SECRET);
        assertThat(s.prefix()).isEqualTo("latchkey");
        assertThat(s.timeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.requireAof()).isTrue();
        assertThat(s.describe()).doesNotContain(SECRET);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "redis://:" + SECRET + "@/0",                       // no host
            "redis://:" + SECRET + "@h/db1",                    // database not a number
            "redis://:" + SECRET + "@h/0/x",
            "redis://:" + SECRET + "@h?prefix=a*b",             // glob character
            "redis://:" + SECRET + "@h?ttl=5s",                 // unknown parameter
            "redis://:" + SECRET + "@h?timeout=0s",
            "redis://user@h",                                   // a user without a password
    })
    void refusesBadUrisWithoutShowingThePassword(String uri) {
        assertThatThrownBy(() -> RedisSettings.parse(LockUri.parse(uri)))
                .isInstanceOf(UnsupportedLockUriException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(SECRET).contains("redis://"));
    }

    @Test
    void aWrongPasswordIsRefusedAtOpenWithoutEchoingIt() {
        String uri = RedisServer.uri();
        String wrong = uri.replaceFirst("redis://:[^@]*@", "redis://:" + SECRET + "@");
        assertThatThrownBy(() -> Latchkey.open(wrong))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("check the user and password")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(SECRET))
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
    }

    @Test
    void theManagerDescribesItselfMasked() {
        String uri = RedisServer.uri();
        String password = LockUri.parse(uri).password().orElseThrow();
        try (LockManager m = Latchkey.open(uri)) {
            assertThat(m.description()).startsWith("redis://").doesNotContain(password);
        }
    }
}
