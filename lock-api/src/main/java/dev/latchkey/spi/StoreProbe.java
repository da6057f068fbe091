package dev.latchkey.spi;

import dev.latchkey.LockBackendException;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A check a backend makes of its store once, before trusting it with locks: that the store honours
 * the conditions exclusion rests on (a second create refused, a stale version refused). An emulator
 * or a proxy that drops them gives no exclusion, and nothing else in a backend would notice.
 *
 * <p><b>Guarantee.</b> {@link #check()} returns only once a probe has passed, so a store calls it
 * before each request and sends none for a lock before that. A probe that throws {@link Untrusted}
 * has reached a verdict: every call from then on throws it again, and the probe never runs again. Any
 * other failure (the store unreachable, throttled) is thrown to that one caller, and the probe runs
 * again at the next call. One probe runs at a time. Safe for concurrent use.
 */
public final class StoreProbe {
    /** The verdict that a store ignores a condition a lock rests on: it cannot hold locks. Not retriable. */
    public static final class Untrusted extends LockBackendException {
        private static final long serialVersionUID = 1L;

        /** @param message names the store (never a credential), what it ignored, and how to skip the probe */
        public Untrusted(String message) {
            super(message, false);
        }
    }

    private final Runnable probe;
    private final ReentrantLock running = new ReentrantLock();
    private volatile boolean pending;
    private volatile Untrusted verdict;

    private StoreProbe(Runnable probe, boolean pending) {
        this.probe = probe;
        this.pending = pending;
    }

    /** A probe still to run: {@code probe} returns if the store passed, or throws. */
    public static StoreProbe of(Runnable probe) {
        return new StoreProbe(Objects.requireNonNull(probe, "probe"), true);
    }

    /** No probe (the user turned it off, or the store is opened to be raced by the kit): {@link #check()} returns at once. */
    public static StoreProbe skipped() {
        return new StoreProbe(() -> {}, false);
    }

    /** Runs the probe if none has passed yet; throws the verdict, or this run's failure. */
    public void check() {
        if (pending) {
            running.lock();
            try {
                if (pending) {
                    probe.run();
                    pending = false;
                }
            } catch (Untrusted e) {
                verdict = e;
                pending = false;
            } finally {
                running.unlock();
            }
        }
        Untrusted v = verdict;
        if (v != null) throw new LockBackendException(v.getMessage(), false, v);
    }

    /**
     * {@link #check()} when a manager opens, so the probe's requests never count against a lease:
     * throws only a verdict; a store that cannot be probed yet is probed again before its first request.
     */
    public void checkOnOpen() {
        try {
            check();
        } catch (LockBackendException e) {
            if (verdict != null) throw e;
        }
    }
}
