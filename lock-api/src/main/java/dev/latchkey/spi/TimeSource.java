package dev.latchkey.spi;

import java.time.Duration;
import java.time.Instant;

/**
 * The clocks a lock manager reads. Backends judge durations (validity, staleness by observation)
 * only with {@link #nanoTime()}; {@link #now()} only labels records for people. A TCK test gives a
 * manager a wall clock an hour off to prove that nothing depends on it.
 */
public interface TimeSource {

    Instant now();

    long nanoTime();

    static TimeSource system() {
        return SystemTime.INSTANCE;
    }

    /** The system clocks with the wall clock moved by {@code offset} (monotonic time unchanged). */
    static TimeSource wallClockOffsetBy(Duration offset) {
        return new TimeSource() {
            @Override public Instant now() { return Instant.now().plus(offset); }
            @Override public long nanoTime() { return System.nanoTime(); }
        };
    }

    enum SystemTime implements TimeSource {
        INSTANCE;
        @Override public Instant now() { return Instant.now(); }
        @Override public long nanoTime() { return System.nanoTime(); }
    }
}
