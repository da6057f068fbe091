package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.LockBackendException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@link RacingWrites} counts the winners of a race truly: one on a compare-and-set, several on a
 * store that checks and then writes with the racers' {@code together} between the two, and none
 * for an attempt that threw.
 */
class RacingWritesTest {
    private static final Duration BOUND = Duration.ofSeconds(60);

    @Test
    void anAtomicWriteHasOneWinner() {
        AtomicReference<String> version = new AtomicReference<>("v0");
        RacingWrites.Outcome o = RacingWrites.race(8, (i, together) -> {
            together.run();
            return version.compareAndSet("v0", "v" + (i + 1));
        }, BOUND);
        assertThat(o.attempts()).isEqualTo(8);
        assertThat(o.won()).as("winners of 8 compare-and-sets of one version").isEqualTo(1);
        assertThat(o.failed()).isEmpty();
    }

    @Test
    void aCheckThenWriteHeldByTogetherLetsSeveralWin() {
        AtomicReference<String> version = new AtomicReference<>("v0");
        RacingWrites.Outcome o = RacingWrites.race(4, (i, together) -> {
            boolean matches = version.get().equals("v0"); // the check ...
            together.run();                                  // ... every racer's check is made before any writes
            if (matches) version.set("v" + (i + 1));
            return matches;
        }, BOUND);
        // together waits at most a second for the others; on a loaded machine one racer may come later
        // than that and find the version changed, so "several", not "all four"
        assertThat(o.won()).as("winners of 4 check-then-write replaces of one version").isGreaterThan(1);
    }

    @Test
    void anAttemptThatThrowsHasLostAndItsExceptionIsKept() {
        LockBackendException refused = new LockBackendException("HTTP 500 to a racing loser", true);
        RacingWrites.Outcome o = RacingWrites.race(3, (i, together) -> {
            if (i == 0) throw refused;
            return i == 1;
        }, BOUND);
        assertThat(o.won()).isEqualTo(1);
        assertThat(o.failed()).containsExactly(refused);
    }

    @Test
    void aRaceStillRunningAtItsBoundFailsRetriably() {
        CountDownLatch never = new CountDownLatch(1);
        assertThatThrownBy(() -> RacingWrites.race(2, (i, together) -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the race interrupts what is still running once it gives up
            }
            return false;
        }, Duration.ofMillis(200)))
                .isExactlyInstanceOf(LockBackendException.class)
                .hasMessageContaining("racing writes still running after 200 ms")
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isTrue());
    }

    @Test
    void aRaceNeedsTwoAttempts() {
        assertThatThrownBy(() -> RacingWrites.race(1, (i, together) -> true, BOUND))
                .isExactlyInstanceOf(IllegalArgumentException.class);
    }
}
