package dev.latchkey.tck;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Every version one name of a {@link dev.latchkey.spi.ConditionalStore} was given, in order, with
 * when each write was in flight on the monotonic clock. It finds versions given twice, and it tells
 * when writes came fast enough that a store stamping versions with a millisecond clock (or a coarser
 * one) must have given one twice: {@link #WINDOW} writes in flight within {@link #WINDOW_SPAN_MILLIS}
 * ms carry stamps from at most {@code WINDOW_SPAN_MILLIS + 1} distinct milliseconds — fewer than the
 * writes (pigeonhole). That holds wherever the stamp is taken (client or server), because it is taken
 * while the write is in flight.
 */
final class VersionHistory {
    static final int WINDOW = 64;
    static final long WINDOW_SPAN_MILLIS = WINDOW / 2;
    /** Repeats named in a failure; the rest are counted. */
    private static final int SHOWN = 5;

    private record Write(String version, String what, long sentNanos, long returnedNanos) {}

    private final String name;
    private final List<Write> writes = new ArrayList<>();

    VersionHistory(String name) {
        this.name = name;
    }

    String name() {
        return name;
    }

    /** Records the version a write returned; {@code what} names the write in messages. */
    void add(String version, String what, long sentNanos, long returnedNanos) {
        writes.add(new Write(version, what, sentNanos, returnedNanos));
    }

    /** Whether the last {@link #WINDOW} writes were all in flight within {@link #WINDOW_SPAN_MILLIS} ms. */
    boolean millisecondClockMustHaveRepeated() {
        int n = writes.size();
        if (n < WINDOW) return false;
        long span = writes.get(n - 1).returnedNanos() - writes.get(n - WINDOW).sentNanos();
        return span <= TimeUnit.MILLISECONDS.toNanos(WINDOW_SPAN_MILLIS);
    }

    /** Each version given a second time, with both writes that got it; empty if none repeated. */
    List<String> repeats() {
        Map<String, Integer> first = new HashMap<>();
        List<String> out = new ArrayList<>();
        int count = 0;
        for (int i = 0; i < writes.size(); i++) {
            Write w = writes.get(i);
            Integer earlier = first.putIfAbsent(w.version(), i);
            if (earlier == null) continue;
            if (++count <= SHOWN) {
                out.add("version " + w.version() + " of " + TckFixture.show(name) + " given by "
                        + writes.get(earlier).what() + " and again by " + w.what());
            }
        }
        if (count > SHOWN) out.add("… and " + (count - SHOWN) + " more repeats among " + writes.size() + " versions given");
        return out;
    }
}
