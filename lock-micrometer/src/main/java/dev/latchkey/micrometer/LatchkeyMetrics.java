package dev.latchkey.micrometer;

import dev.latchkey.LeaseLostException;
import dev.latchkey.LockListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer meters for the leases of the managers it listens to. It is the managers'
 * {@link LockListener} and a {@link MeterBinder}:
 * <pre>{@code
 * LatchkeyMetrics metrics = new LatchkeyMetrics();
 * LockManager locks = Latchkey.open(uri, LockContext.defaults().withListener(metrics));
 * metrics.bindTo(registry);
 * }</pre>
 * Meters, each tagged {@code scheme} (the backend's URI scheme) and never by key, so their number
 * stays small however many keys are locked:
 * <ul>
 *   <li>{@code latchkey.acquire} (timer, tag {@code outcome} = {@code acquired} | {@code busy}):
 *       an acquisition's latency, or how long a call waited before finding the key held;</li>
 *   <li>{@code latchkey.hold} (timer, tag {@code end} = {@code released} | {@code lost}): how long
 *       leases were held;</li>
 *   <li>{@code latchkey.leases.held} (gauge): leases held now;</li>
 *   <li>{@code latchkey.renewal.failures} (counter): renewals that did not land;</li>
 *   <li>{@code latchkey.lost} (counter, tag {@code reason}): leases lost, by
 *       {@link LeaseLostException.Reason};</li>
 *   <li>{@code latchkey.store.waits} (counter, tag {@code reason}, e.g. {@code restart-guard}):
 *       acquisitions the store itself refused, not a holder ({@link LockListener#storeWait}); each is
 *       also a {@code busy} acquire.</li>
 * </ul>
 * Events before {@link #bindTo} are counted in the gauge only. Thread-safe; it runs on the
 * managers' event threads, never on a lease's own (see {@link LockListener}).
 */
public final class LatchkeyMetrics implements LockListener, MeterBinder {
    private final Map<String, AtomicLong> held = new ConcurrentHashMap<>();
    private volatile MeterRegistry registry;

    @Override
    public void bindTo(MeterRegistry registry) {
        this.registry = registry;
        held.keySet().forEach(this::heldGauge);
    }

    @Override
    public void acquired(String scheme, String key, Duration latency) {
        heldGauge(scheme).incrementAndGet();
        MeterRegistry r = registry;
        if (r != null) timer(r, "latchkey.acquire", scheme, "outcome", "acquired").record(latency);
    }

    @Override
    public void busy(String scheme, String key, Duration waited) {
        MeterRegistry r = registry;
        if (r != null) timer(r, "latchkey.acquire", scheme, "outcome", "busy").record(waited);
    }

    @Override
    public void storeWait(String scheme, String key, String reason, Instant until) {
        MeterRegistry r = registry;
        if (r != null) Counter.builder("latchkey.store.waits").tag("scheme", scheme).tag("reason", reason).register(r).increment();
    }

    @Override
    public void renewalFailed(String scheme, String key, Duration validLeft, RuntimeException error) {
        MeterRegistry r = registry;
        if (r != null) Counter.builder("latchkey.renewal.failures").tag("scheme", scheme).register(r).increment();
    }

    @Override
    public void lost(String scheme, String key, Duration heldFor, LeaseLostException cause) {
        ended(scheme, heldFor, "lost");
        MeterRegistry r = registry;
        if (r != null) {
            Counter.builder("latchkey.lost").tag("scheme", scheme).tag("reason", cause.reason().name()).register(r).increment();
        }
    }

    @Override
    public void released(String scheme, String key, Duration heldFor, boolean confirmed) {
        ended(scheme, heldFor, "released");
    }

    private void ended(String scheme, Duration heldFor, String end) {
        heldGauge(scheme).decrementAndGet();
        MeterRegistry r = registry;
        if (r != null) timer(r, "latchkey.hold", scheme, "end", end).record(heldFor);
    }

    /** The count of held leases of {@code scheme}, registered as a gauge once a registry is bound. */
    private AtomicLong heldGauge(String scheme) {
        AtomicLong count = held.computeIfAbsent(scheme, s -> new AtomicLong());
        MeterRegistry r = registry;
        if (r != null) Gauge.builder("latchkey.leases.held", count, AtomicLong::get).tag("scheme", scheme).register(r);
        return count;
    }

    private static Timer timer(MeterRegistry r, String name, String scheme, String tag, String value) {
        return Timer.builder(name).tag("scheme", scheme).tag(tag, value).register(r);
    }
}
