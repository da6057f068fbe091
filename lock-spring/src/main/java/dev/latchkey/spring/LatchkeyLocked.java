package dev.latchkey.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while this process holds the Latchkey lock {@link #key()}; made for
 * {@code @Scheduled} methods that every instance schedules and only one should run at a time:
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @LatchkeyLocked(key = "nightly-report", ttl = "PT30S")
 * public void nightlyReport() { ... }
 * }</pre>
 *
 * <p><b>Guarantee.</b> Each call makes one attempt ({@code tryAcquire}, no waiting). If another holder
 * has the key (or the store keeps it busy, as PostgreSQL's restart guard does), or the store fails
 * ({@link dev.latchkey.LockBackendException}), the method body does not run and the call returns at
 * once (a skip) with no value: {@code null}, or for a primitive return type its zero ({@code 0},
 * {@code false}), or for {@link java.util.Optional} an empty one. Skips are logged once per change:
 * the first skip after a run at INFO naming the holder, repeats at DEBUG; a store failure as one WARN
 * line (message and causes) per distinct cause, repeats and stack traces at DEBUG.
 * Otherwise the body runs under a heartbeating lease, released when it returns or throws. If the
 * lease is lost during the run (broken by a force release, store unreachable past the safety
 * margin), the method's thread is interrupted: blocking calls in it throw
 * {@link InterruptedException} (or {@link java.nio.channels.ClosedByInterruptException}), and
 * {@link Thread#isInterrupted()} turns true. When the method then returns or throws, the call
 * clears the interrupt it caused (the scheduler's thread is not left interrupted) and throws
 * {@link dev.latchkey.LeaseLostException} with the loss's reason, the method's own exception, if
 * any, attached as suppressed. A loss noticed at the release after the run (the lease may have been
 * broken during the run) also throws it. {@code @Scheduled} logs it and runs the next time as usual.
 *
 * <p>{@link #key()} and {@link #ttl()} may hold {@code ${…}} placeholders (and {@code #{…}}
 * expressions), resolved as {@code @Scheduled}'s are; a key that is invalid or does not resolve, or a
 * TTL that does not parse, fails the start-up naming the method. There is no hold-at-least (ShedLock's
 * {@code lockAtLeastFor}): the key is free as soon as the run ends. The lease covers the call only,
 * not asynchronous work the method starts. {@link LatchkeyLockedRun#currentLease()} gives the method
 * its lease, e.g. for the fencing token.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LatchkeyLocked {
    /** The lock's key (a Latchkey key: checked at start-up), e.g. {@code report-${app.region}}. */
    String key();

    /**
     * How long the lease outlives this process if it dies mid-run, as {@code PT30S} or {@code 30s}, or
     * a placeholder such as {@code ${report.ttl:30s}}; empty = {@code latchkey.ttl}. The lease heartbeats while the method runs, so the run itself may
     * take longer.
     */
    String ttl() default "";
}
