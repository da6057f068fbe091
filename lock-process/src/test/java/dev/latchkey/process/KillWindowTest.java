package dev.latchkey.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class KillWindowTest {
    private static Duration s(long seconds) {
        return Duration.ofSeconds(seconds);
    }

    @Test
    void graceAndReserveFillTheSafetyMargin() {
        // margin TTL/5 = grace + max(1s, margin/2)
        assertThat(KillWindow.maxGrace(s(5))).isZero();
        assertThat(KillWindow.maxGrace(Duration.ofMillis(7500))).isEqualTo(Duration.ofMillis(500));
        assertThat(KillWindow.maxGrace(s(10))).isEqualTo(s(1));
        assertThat(KillWindow.maxGrace(s(60))).isEqualTo(s(6));
        assertThat(KillWindow.maxGrace(s(600))).isEqualTo(s(60));
    }

    @Test
    void theDefaultGraceIsTheLongestThatFitsUpTo10s() {
        assertThat(KillWindow.grace(s(5), null)).isZero();
        assertThat(KillWindow.grace(s(60), null)).isEqualTo(s(6));
        assertThat(KillWindow.grace(s(600), null)).isEqualTo(s(10));
        assertThat(KillWindow.grace(s(600), s(30))).isEqualTo(s(30));
        assertThat(KillWindow.grace(s(60), s(6))).isEqualTo(s(6));
    }

    @Test
    void aGraceThatDoesNotFitOrATtlTooShortIsRefusedNamingTheLimit() {
        assertThatThrownBy(() -> KillWindow.grace(s(60), Duration.ofMillis(6001)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("use a grace of 6s or less, or a TTL of 61s or more");
        assertThatThrownBy(() -> KillWindow.grace(Duration.ofMillis(4999), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("use a TTL of 5s or more");
        for (Duration grace : new Duration[] {Duration.ZERO, Duration.ofMillis(333), s(1), s(7)}) {
            Duration ttl = KillWindow.minTtl(grace);
            assertThat(KillWindow.grace(ttl, grace)).as("a grace of %s fits the TTL it is told to use, %s", grace, ttl).isEqualTo(grace);
        }
    }
}
