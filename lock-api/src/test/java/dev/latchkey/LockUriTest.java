package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LockUriTest {
    @Test
    void parsesEveryPart() {
        LockUri u = LockUri.parse("postgres://app:s3cr%40t@db.example:6432/locks?mode=lease&sslmode=require");
        assertThat(u.scheme()).isEqualTo("postgres");
        assertThat(u.user()).contains("app");
        assertThat(u.password()).contains("s3cr@t");
        assertThat(u.host()).isEqualTo("db.example");
        assertThat(u.port()).hasValue(6432);
        assertThat(u.path()).isEqualTo("/locks");
        assertThat(u.params()).containsEntry("mode", "lease").containsEntry("sslmode", "require");
    }

    @Test
    void masksPasswordAndSecretParameters() {
        LockUri u = LockUri.parse("s3://bucket/p?accessKeyId=AKIA1&secretAccessKey=verysecret&sas=sv%3Dx&region=eu-west-1");
        String shown = u.toString() + LockUri.parse("postgres://u:hunter2@h/db").toString();
        assertThat(shown).doesNotContain("verysecret", "hunter2", "sv%3Dx", "sv=x").contains("region=eu-west-1", "****");
    }

    @Test
    void unparsableUrisAreReportedWithoutSecrets() {
        assertThatThrownBy(() -> LockUri.parse("postgres://u:hunter2@h:notaport/db"))
                .isInstanceOf(UnsupportedLockUriException.class)
                .hasMessageContaining("notaport").hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> LockUri.parse("no scheme here")).isInstanceOf(UnsupportedLockUriException.class);
        assertThatThrownBy(() -> LockUri.parse("")).isInstanceOf(UnsupportedLockUriException.class);
    }

    @Test
    void typedParametersAndUnknownNames() {
        LockUri u = LockUri.parse("clickhouse://h/db?settle=250ms&stale=5m&retries=3&ssl=true");
        assertThat(u.durationParam("settle", Duration.ZERO)).isEqualTo(Duration.ofMillis(250));
        assertThat(u.durationParam("stale", Duration.ZERO)).isEqualTo(Duration.ofMinutes(5));
        assertThat(u.intParam("retries", 0)).isEqualTo(3);
        assertThat(u.booleanParam("ssl", false)).isTrue();
        assertThatThrownBy(() -> u.requireOnly(Set.of("settle", "stale")))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("retries");
    }

    @Test
    void unknownSchemeListsInstalledOnes() {
        assertThatThrownBy(() -> Latchkey.open("s3://bucket/x"))
                .isInstanceOf(UnsupportedLockUriException.class)
                .hasMessageContaining("lock-s3").hasMessageContaining("file").hasMessageContaining("mem");
        assertThatThrownBy(() -> Latchkey.open("nosuch://x"))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("installed schemes: file, mem");
    }
}
