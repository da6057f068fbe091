package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LockUriTest {
    /** The typed options of the client factories become a URI this way: values arrive exactly as given. */
    @Test
    void paramsAreEncodedIntoTheQuery() {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("owner", "a&b=c d");
        params.put("timeout", "2s");
        LockUri uri = LockUri.parse("s3://bucket/locks", params);
        assertThat(uri.params()).containsExactly(Map.entry("owner", "a&b=c d"), Map.entry("timeout", "2s"));
        assertThat(uri.path()).isEqualTo("/locks");
        assertThat(LockUri.parse("postgres:///", Map.of()).params()).isEmpty();
    }

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

    /** The object stores' key prefix: slashes at either end dropped, inner ones kept. */
    @Test
    void pathPrefixDropsOuterSlashesOnly() {
        assertThat(LockUri.parse("s3://bucket/locks/app/").pathPrefix()).isEqualTo("locks/app");
        assertThat(LockUri.parse("gs://bucket//locks/app").pathPrefix()).isEqualTo("locks/app");
        assertThat(LockUri.parse("azblob://container/").pathPrefix()).isEmpty();
        assertThat(LockUri.parse("azblob://container").pathPrefix()).isEmpty();
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

    /** A password may hold unencoded / ? # @: the user info runs to the last '@', and none of it is ever shown. */
    private static final String HOSTILE_INFO = "alice:PWa/PWb?PWc#PWd@PWe";

    @Test
    void userInfoRunsToTheLastAtSoAPasswordMayHoldSlashQuestionHashAndAt() {
        LockUri u = LockUri.parse("postgres://" + HOSTILE_INFO + "@db.example:6432/locks?mode=lease");
        assertThat(u.user()).contains("alice");
        assertThat(u.password()).contains("PWa/PWb?PWc#PWd@PWe");
        assertThat(u.host()).isEqualTo("db.example");
        assertThat(u.port()).hasValue(6432);
        assertThat(u.path()).isEqualTo("/locks");
        assertThat(u.params()).containsOnlyKeys("mode");
        assertThat(u.toString()).isEqualTo("postgres://****@db.example:6432/locks?mode=lease");
        assertThat(LockUri.parse("file:///tmp/a@b").path()).as("no authority: no user info").isEqualTo("/tmp/a@b");
        assertThat(LockUri.parse("file:///tmp/a@b").user()).isEmpty();
    }

    @Test
    void noPartOfTheUserInfoIsShownByToStringOrAnyParseError() {
        assertThat(LockUri.parse("postgres://just-a-user@h/db").toString()).isEqualTo("postgres://****@h/db");
        for (String bad : new String[] {
                "postgres://" + HOSTILE_INFO + "@h:notaport/db",
                "postgres://alice:PWa/PWb@h:99999/db",
                "postgres://alice:PWa%zz@h/db",
                "postgres://alice%zz:PWa/b@h/db",
                "postgres://" + HOSTILE_INFO + "@h/db?x=%zz",
                "postgres://" + HOSTILE_INFO + "@h/db?a=1&a=2",
                "postgres://" + HOSTILE_INFO + "@h/%zz",
                "postgres:" + HOSTILE_INFO + "@h/db",
                "postgres:/" + HOSTILE_INFO + "@h/db",
                HOSTILE_INFO + "@h/db",
                "alice:PWa/PWb@h:1/db"}) {
            assertThatThrownBy(() -> LockUri.parse(bad)).as(bad)
                    .isInstanceOf(UnsupportedLockUriException.class)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("alice", "PW"));
        }
        assertThatThrownBy(() -> LockUri.parse("postgres://" + HOSTILE_INFO + "@h:notaport/db"))
                .hasMessageContaining("bad port 'notaport'");
    }

    @Test
    void typedParameterErrorsShowTheUriMasked() {
        LockUri u = LockUri.parse("clickhouse://" + HOSTILE_INFO + "@h/db?settle=soon&retries=x&ssl=maybe");
        assertThatThrownBy(() -> u.durationParam("settle", Duration.ZERO)).hasMessageNotContaining("PW").hasMessageNotContaining("alice");
        assertThatThrownBy(() -> u.intParam("retries", 0)).hasMessageNotContaining("PW").hasMessageNotContaining("alice");
        assertThatThrownBy(() -> u.booleanParam("ssl", false)).hasMessageNotContaining("PW").hasMessageNotContaining("alice");
    }

    @Test
    void embeddedBackendsRefuseUserInfoWithoutShowingIt() {
        for (String uri : new String[] {"file://" + HOSTILE_INFO + "@/tmp/latchkey-x", "mem://" + HOSTILE_INFO + "@name"}) {
            assertThatThrownBy(() -> Latchkey.open(uri)).as(uri)
                    .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("takes no user info")
                    .hasMessageNotContaining("PW").hasMessageNotContaining("alice");
        }
    }

    @Test
    void typedParametersAndUnknownNames() {
        LockUri u = LockUri.parse("clickhouse://h/db?settle=250ms&stale=5m&retries=3&ssl=true");
        assertThat(u.durationParam("settle", Duration.ZERO)).isEqualTo(Duration.ofMillis(250));
        assertThat(u.durationParam("stale", Duration.ZERO)).isEqualTo(Duration.ofMinutes(5));
        LockUri iso = LockUri.parse("clickhouse://h/db?settle=PT0.25S&stale=1d");
        assertThat(iso.durationParam("settle", Duration.ZERO)).as("ISO-8601 in a URI").isEqualTo(Duration.ofMillis(250));
        assertThat(iso.durationParam("stale", Duration.ZERO)).as("days in a URI").isEqualTo(Duration.ofDays(1));
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
