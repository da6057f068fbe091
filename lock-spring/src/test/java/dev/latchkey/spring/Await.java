package dev.latchkey.spring;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition, polling; generous bounds, since a loaded 2-core machine is slow. */
final class Await {
    static final Duration SOON = Duration.ofSeconds(30);

    private Await() {}

    static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + SOON.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within " + SOON + ": " + what);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for: " + what, e);
            }
        }
    }
}
