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
 * <p><b>Hold at least.</b> With {@link #holdAtLeast()} (ShedLock's {@code lockAtLeastFor}) a run that
 * ends sooner leaves the key taken until that long after the run started, held by the store
 * ({@link dev.latchkey.Lease#release(java.time.Duration)}: the lease is renewed once with the time
 * left and never again), so other instances skip until then even if this process dies meanwhile —
 * except on backends whose store frees a dead holder's keys at once
 * ({@link dev.latchkey.Capability#HOLDER_DEATH_DETECTION}: {@code file://}, PostgreSQL's advisory
 * mode). Time left under {@link dev.latchkey.LeaseOptions#MIN_TTL} is held for that minimum: longer,
 * never shorter. Where the backend cannot hold a lease of the time left (Azure's lease mode takes 15
 * to 60 whole seconds), this process keeps the lease, heartbeating, and releases it then; if it dies
 * meanwhile, the key frees by its TTL.
 *
 * <p>{@link #key()}, {@link #ttl()} and {@link #holdAtLeast()} may hold {@code ${…}} placeholders
 * (and {@code #{…}} expressions), resolved as {@code @Scheduled}'s are; a key that is invalid or does
 * not resolve, or a duration that does not parse or is negative, fails the start-up naming the
 * method. The lease covers the call only, not asynchronous work the method starts.
 * {@link LatchkeyLockedRun#currentLease()} gives the method its lease, e.g. for the fencing token.
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

    /**
     * How long after a run started the key stays taken even if the run ended sooner, as {@code PT5M}
     * or {@code 5m}, or a placeholder; empty = not at all (free when the run ends). For jobs that must
     * not run again within that time on any instance, e.g. when the instances' clocks or schedules
     * disagree by a little.
     */
    String holdAtLeast() default "";
}
