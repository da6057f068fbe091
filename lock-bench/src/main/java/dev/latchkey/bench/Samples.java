package dev.latchkey.bench;

import java.util.Arrays;

/** Latency samples in nanoseconds, kept whole (no histogram error) and sorted once for percentiles. Not thread-safe. */
final class Samples {
    private long[] values = new long[4096];
    private int size;
    private boolean sorted;

    void add(long nanos) {
        if (size == values.length) values = Arrays.copyOf(values, size * 2);
        values[size++] = nanos;
        sorted = false;
    }

    int size() {
        return size;
    }

    /** The {@code q}-quantile in microseconds (nearest rank), NaN when empty. */
    double percentileMicros(double q) {
        if (size == 0) return Double.NaN;
        if (!sorted) {
            Arrays.sort(values, 0, size);
            sorted = true;
        }
        int rank = (int) Math.ceil(q * size) - 1;
        return values[Math.max(0, Math.min(size - 1, rank))] / 1000.0;
    }
}
