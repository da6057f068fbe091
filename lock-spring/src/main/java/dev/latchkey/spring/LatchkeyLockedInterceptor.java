package dev.latchkey.spring;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.StringValueResolver;

/**
 * Runs a {@link LatchkeyLocked @LatchkeyLocked} method under its lease, skips it while another
 * holder has the key, and interrupts it if the lease is lost mid-run; the annotation's Javadoc states
 * exactly what the method and its caller see.
 */
final class LatchkeyLockedInterceptor implements MethodInterceptor {
    private static final Log log = LogFactory.getLog(LatchkeyLockedInterceptor.class);

    private final Supplier<LockManager> locks;
    private final Supplier<LatchkeyProperties> properties;
    /** Resolves {@code ${…}} and {@code #{…}} in the key and TTL, as {@code @Scheduled}'s attributes are. */
    private final StringValueResolver values;
    private final Outcomes outcomes = new Outcomes();

    LatchkeyLockedInterceptor(Supplier<LockManager> locks, Supplier<LatchkeyProperties> properties, StringValueResolver values) {
        this.locks = locks;
        this.properties = properties;
        this.values = values;
    }

    /** The annotation's key, resolved. */
    static String key(LatchkeyLocked spec, StringValueResolver values) {
        return values.resolveStringValue(spec.key());
    }

    /** The annotation's TTL, resolved; null = {@code latchkey.ttl}. */
    static Duration ttl(LatchkeyLocked spec, StringValueResolver values) {
        return duration(spec.ttl(), values);
    }

    /** The annotation's hold-at-least, resolved; zero = none. */
    static Duration holdAtLeast(LatchkeyLocked spec, StringValueResolver values) {
        Duration hold = duration(spec.holdAtLeast(), values);
        if (hold == null) return Duration.ZERO;
        if (hold.isNegative()) throw new IllegalArgumentException("holdAtLeast must not be negative: " + spec.holdAtLeast());
        return hold;
    }

    private static Duration duration(String text, StringValueResolver values) {
        String resolved = values.resolveStringValue(text);
        return resolved == null || resolved.isBlank() ? null : DurationStyle.detectAndParse(resolved);
    }

    /** What a skipped call returns: no value of the return type (null, zero, false), or an empty {@link Optional}. */
    static Object skipped(Class<?> returnType) {
        if (returnType == Optional.class) return Optional.empty();
        if (!returnType.isPrimitive() || returnType == void.class) return null;
        return Array.get(Array.newInstance(returnType, 1), 0); // the primitive's default: 0, 0.0, false, '\0'
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getThis() == null ? invocation.getMethod()
                : AopUtils.getMostSpecificMethod(invocation.getMethod(), invocation.getThis().getClass());
        LatchkeyLocked spec = AnnotatedElementUtils.findMergedAnnotation(method, LatchkeyLocked.class);
        if (spec == null) return invocation.proceed();
        String name = method.getDeclaringClass().getSimpleName() + "." + method.getName();
        String key = key(spec, values);
        Duration ttl = ttl(spec, values);
        LeaseOptions options = (ttl == null ? properties.get().leaseOptions() : properties.get().leaseOptions(ttl))
                .withMetadata(Map.of("method", name));
        Duration hold = holdAtLeast(spec, values);
        LockManager manager = locks.get();
        Optional<Lease> taken;
        try {
            taken = manager.tryAcquire(key, options);
        } catch (LockBackendException e) {
            outcomes.failed(name, key, e);
            return skipped(method.getReturnType());
        }
        if (taken.isEmpty()) {
            outcomes.skipped(name, key, manager);
            return skipped(method.getReturnType());
        }
        outcomes.ran(name, key);
        // from once the key is ours, so the store holds it at least that long after the run started
        return runHolding(taken.get(), name, invocation, System.nanoTime() + hold.toNanos());
    }

    /** @param holdEnds when ({@link System#nanoTime()}) the key may be free at the earliest */
    private static Object runHolding(Lease lease, String name, MethodInvocation invocation, long holdEnds) throws Throwable {
        RunGuard guard = new RunGuard(Thread.currentThread());
        lease.onLost(guard::lost);
        Throwable failure = null;
        Lease outer = LatchkeyLockedRun.enter(lease);
        try {
            return invocation.proceed();
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            LatchkeyLockedRun.restore(outer);
            LeaseLostException lost = guard.finish();
            if (lost == null) lost = release(lease, name, Duration.ofNanos(holdEnds - System.nanoTime()));
            if (lost != null) {
                LeaseLostException reported = new LeaseLostException(lost.reason(), "the lease on '" + lease.key()
                        + "' was lost while " + name + " ran: " + lost.getMessage()
                        + "; its work may have overlapped with the next holder's", lost);
                if (failure != null) reported.addSuppressed(failure);
                throw reported;
            }
        }
    }

    /**
     * Releases after a run, keeping the key taken for {@code keep} if positive (the annotation's
     * hold-at-least); a loss it reveals is returned, an unconfirmed release only logged.
     */
    private static LeaseLostException release(Lease lease, String name, Duration keep) {
        try {
            if (keep.isNegative() || keep.isZero()) {
                lease.release();
            } else {
                keepFor(lease, keep.compareTo(LeaseOptions.MIN_TTL) < 0 ? LeaseOptions.MIN_TTL : keep);
            }
            return null;
        } catch (LeaseLostException e) {
            return e;
        } catch (LockBackendException e) {
            log.warn("release of '" + lease.key() + "' after " + name + " was not confirmed (it frees by its TTL): " + e.getMessage());
            return null;
        }
    }

    /** Keeps the key taken for {@code keep} by the store, or else by this process (see the annotation). */
    private static void keepFor(Lease lease, Duration keep) {
        try {
            lease.release(keep);
        } catch (IllegalArgumentException cannotHold) { // a TTL this backend takes no lease of
            CompletableFuture.delayedExecutor(keep.toNanos(), TimeUnit.NANOSECONDS).execute(() -> {
                try {
                    lease.release();
                } catch (LeaseLostException | LockBackendException e) {
                    log.debug("release of '" + lease.key() + "' after its hold-at-least: " + e.getMessage());
                }
            });
        }
    }

    /**
     * The log of skips and store failures: one line when a method's outcome changes, not one per
     * scheduled call. A method's first skip after a run (or a failure) is logged at INFO naming the
     * holder (one {@code inspect}; PostgreSQL's restart guard shows there with its end), repeats at
     * DEBUG; a store failure is one WARN line (message and causes, no stack trace) per distinct cause,
     * repeats and the stack trace at DEBUG; the first run after a failure says so at INFO.
     */
    private static final class Outcomes {
        private static final String RAN = "ran";
        private static final String SKIPPED = "skipped";
        /** The last outcome of each method and key. */
        private final Map<String, String> last = new ConcurrentHashMap<>();

        void ran(String name, String key) {
            String before = last.put(name + " " + key, RAN);
            if (before != null && !before.equals(RAN) && !before.equals(SKIPPED)) {
                log.info(name + " runs again: the lock store answers for '" + key + "'");
            }
        }

        void skipped(String name, String key, LockManager manager) {
            if (SKIPPED.equals(last.put(name + " " + key, SKIPPED))) {
                if (log.isDebugEnabled()) log.debug("skipped " + name + ": '" + key + "' is still busy");
                return;
            }
            String holder;
            try {
                holder = manager.inspect(key).map(LockInfo::describeHolder).orElse("another holder, gone since");
            } catch (LockBackendException e) {
                holder = "another holder (the store did not say who: " + e.getMessage() + ")";
            }
            log.info("skipped " + name + ": '" + key + "' is held by " + holder
                    + " (further skips are logged at DEBUG until it runs or fails)");
        }

        void failed(String name, String key, LockBackendException e) {
            String cause = oneLine(e);
            if (cause.equals(last.put(name + " " + key, cause))) {
                if (log.isDebugEnabled()) log.debug("skipped " + name + " again: the lock store failed: " + cause, e);
                return;
            }
            log.warn("skipped " + name + ": the lock store failed for '" + key + "': " + cause
                    + " (the same failure again is logged at DEBUG, with its stack trace)");
            if (log.isDebugEnabled()) log.debug("the failure of the lock store for " + name, e);
        }

        /** {@code e}'s message and those of its causes that add to it, in one line. */
        static String oneLine(Throwable e) {
            StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
            int depth = 0; // a cause chain may loop
            for (Throwable c = e.getCause(); c != null && depth++ < 8; c = c.getCause()) {
                String m = c.getMessage();
                if (m != null && sb.indexOf(m) < 0) sb.append("; caused by ").append(c.getClass().getSimpleName()).append(": ").append(m);
            }
            return sb.toString().replaceAll("\\s*\\R\\s*", " ");
        }
    }

    /**
     * Interrupts the running thread when the lease is lost, only while the run lasts: a loss reported
     * after {@link #finish()} must not interrupt whatever the thread runs next. The lock makes the two
     * exclusive (a loss either lands before the end and is returned, or after it and is dropped); it
     * is held for no I/O and no wait.
     *
     * <p>The same guard as lock-api's {@code LockedCall} (behind {@link LockManager#callLocked}), which
     * is package-private there; {@code callLocked} itself does not fit: it waits ({@code acquire})
     * instead of skipping, throws an unconfirmed release, and throws the lease's own loss, which
     * cannot be told from a {@link LeaseLostException} or {@code LockTimeoutException} of the method.
     */
    private static final class RunGuard {
        private final Thread runner;
        private final ReentrantLock lock = new ReentrantLock();
        private boolean running = true; // guarded by lock
        private LeaseLostException lost; // guarded by lock

        RunGuard(Thread runner) {
            this.runner = runner;
        }

        void lost(LeaseLostException e) {
            lock.lock();
            try {
                if (!running) return;
                lost = e;
                runner.interrupt();
            } finally {
                lock.unlock();
            }
        }

        /** Ends the run; clears the interrupt this guard caused. Returns the loss, if any. */
        LeaseLostException finish() {
            lock.lock();
            try {
                running = false;
                if (lost != null) Thread.interrupted();
                return lost;
            } finally {
                lock.unlock();
            }
        }
    }
}
