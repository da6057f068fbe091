package dev.latchkey.tck;

import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link TimeSource} a test can recognise in what a manager did with it: both clocks run
 * {@link #offset} ahead of the system's (legal: a wall clock may be off, and a monotonic clock's
 * origin is arbitrary), and reads of the monotonic clock are counted. A manager that ignored the
 * context carrying it never reads it and labels its leases with the system's wall clock; one that
 * mixes its monotonic readings with {@link System#nanoTime()} finds every lease {@code offset} old.
 */
final class ContextClock implements TimeSource {
    private final Duration offset;
    private final AtomicLong monotonicReads = new AtomicLong();

    ContextClock(Duration offset) {
        this.offset = offset;
    }

    Duration offset() {
        return offset;
    }

    long monotonicReads() {
        return monotonicReads.get();
    }

    @Override
    public Instant now() {
        return Instant.now().plus(offset);
    }

    @Override
    public long nanoTime() {
        monotonicReads.incrementAndGet();
        return System.nanoTime() + offset.toNanos();
    }
}
