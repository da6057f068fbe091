package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.spi.LockNames;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LockKeysTest {
    @Test
    void rejectsBadKeys() {
        for (String bad : new String[] {"", "a\u0000b", "tab\tkey", "nl\n", "\u007f", "x".repeat(513), "\ud800"}) {
            assertThatThrownBy(() -> LockKeys.validate(bad)).as(bad).isInstanceOf(InvalidLockKeyException.class);
        }
        assertThatThrownBy(() -> LockKeys.validate(null)).isInstanceOf(InvalidLockKeyException.class);
        assertThat(LockKeys.validate("x".repeat(512))).hasSize(512);
        assertThat(LockKeys.validate("é".repeat(256))).hasSize(256); // 512 bytes
        assertThatThrownBy(() -> LockKeys.validate("é".repeat(256) + "x")).isInstanceOf(InvalidLockKeyException.class);
    }

    @Test
    void namesAreSafeDistinctAndReversible() {
        List<String> keys = List.of("a", "A", "../etc/passwd", "a/b", "a%2Fb", "a.b", "a..b", "'; DROP TABLE x;--",
                "$(rm -rf /)", "space key", "emoji \ud83d\udd12", "\u05e9\u05dc\u05d5\u05dd", "e\u0301", "\u00e9",
                "~7E", "x".repeat(512), "x".repeat(511) + "y", "\u00e9".repeat(256));
        Set<String> names = new HashSet<>();
        for (String k : keys) {
            String n = LockNames.encode(k);
            assertThat(n).matches("[a-z0-9_~\\-A-F]+").doesNotContain("/", ".", "%").hasSizeLessThanOrEqualTo(202);
            assertThat(n.replaceAll("~~[0-9a-f]{64}$", "").replaceAll("~[0-9A-F]{2}", "")).matches("[a-z0-9_\\-]*");
            assertThat(names.add(n)).as("distinct name for %s", k).isTrue();
            if (!n.contains("~~")) assertThat(LockNames.decode(n)).contains(k);
            assertThat(n).startsWith(LockNames.listingPrefix(k.substring(0, Math.min(k.length(), 3))));
        }
    }

    @Test
    void durations() {
        assertThat(Durations.parse("500ms").toMillis()).isEqualTo(500);
        assertThat(Durations.parse("30s").toSeconds()).isEqualTo(30);
        assertThat(Durations.parse("5m").toMinutes()).isEqualTo(5);
        assertThat(Durations.parse("2").toSeconds()).isEqualTo(2);
        assertThat(Durations.parse("2d")).isEqualTo(java.time.Duration.ofDays(2));
        assertThat(Durations.parse("PT30S")).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(Durations.parse("pt0.5s")).isEqualTo(java.time.Duration.ofMillis(500));
        assertThat(Durations.parse("P1DT2H")).isEqualTo(java.time.Duration.ofHours(26));
        assertThatThrownBy(() -> Durations.parse("PT-5S")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        assertThatThrownBy(() -> Durations.parse("P1Y")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT30S");
        assertThatThrownBy(() -> Durations.parse("5 minutes")).isInstanceOf(IllegalArgumentException.class);
        assertThat(Durations.format(java.time.Duration.ofMillis(1500))).isEqualTo("1500ms");
    }
}
