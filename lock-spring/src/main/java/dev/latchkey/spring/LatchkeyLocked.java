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
 * has the key, the method body does not run and the call returns at once (a skip, logged at debug).
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
 * <p>The method must return {@code void} (a skipped run has no result): a non-void method fails at
 * start-up. {@link LatchkeyLockedRun#currentLease()} gives the method its lease, e.g. for the fencing token.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LatchkeyLocked {
    /** The lock's key (a Latchkey key: checked at start-up). */
    String key();

    /**
     * How long the lease outlives this process if it dies mid-run, as {@code PT30S} or {@code 30s};
     * empty = {@code latchkey.ttl}. The lease heartbeats while the method runs, so the run itself may
     * take longer.
     */
    String ttl() default "";
}
