package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.fail;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LockListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** A {@link LockListener} that records every event, with the thread it came on, for the events contract. */
class RecordingListener implements LockListener {

    /** One call of the listener; {@code cause} only for {@code lost}. */
    record Event(String type, String scheme, String key, Duration duration, LeaseLostException cause, Thread thread) {}

    private final List<Event> events = new CopyOnWriteArrayList<>();

    @Override public void acquired(String scheme, String key, Duration latency) {
        record("acquired", scheme, key, latency, null);
    }

    @Override public void busy(String scheme, String key, Duration waited) {
        record("busy", scheme, key, waited, null);
    }

    @Override public void renewed(String scheme, String key, Duration validFor) {
        record("renewed", scheme, key, validFor, null);
    }

    @Override public void renewalFailed(String scheme, String key, Duration validLeft, RuntimeException error) {
        record("renewalFailed", scheme, key, validLeft, null);
    }

    @Override public void lost(String scheme, String key, Duration held, LeaseLostException cause) {
        record("lost", scheme, key, held, cause);
    }

    @Override public void released(String scheme, String key, Duration held, boolean confirmed) {
        record(confirmed ? "released" : "released-unconfirmed", scheme, key, held, null);
    }

    void record(String type, String scheme, String key, Duration duration, LeaseLostException cause) {
        events.add(new Event(type, scheme, key, duration, cause, Thread.currentThread()));
    }

    /** Events of {@code key} so far, in the order the listener got them, without {@code renewed}. */
    List<Event> of(String key) {
        return events.stream().filter(e -> e.key().equals(key) && !e.type().equals("renewed")).collect(Collectors.toList());
    }

    List<String> typesOf(String key) {
        return of(key).stream().map(Event::type).collect(Collectors.toList());
    }

    long count(String key, String type) {
        return events.stream().filter(e -> e.key().equals(key) && e.type().equals(type)).count();
    }

    /** Waits (polling) until an event of {@code type} for {@code key} has come; fails after {@code limit}. */
    Event await(String key, String type, Duration limit) throws InterruptedException {
        long start = System.nanoTime();
        while (System.nanoTime() - start < limit.toNanos()) {
            for (Event e : events) {
                if (e.key().equals(key) && e.type().equals(type)) return e;
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
        return fail("no '" + type + "' event for " + TckFixture.show(key) + " within " + limit.toSeconds()
                + " s; the listener got " + typesOf(key));
    }
}
