package dev.latchkey;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link LockManager#callLocked}: runs work on the caller's thread under a lease and interrupts
 * that thread if the lease is lost meanwhile.
 *
 * <p><b>Guarantee.</b> The work's result is returned only if the lease was held, unlost, from
 * before the work began until after it ended and was then released. If the lease is lost while the
 * work runs, the work's thread is interrupted at once (from the lease's loss listener) and the call
 * throws that {@link LeaseLostException}, with its reason, whatever the work returned or threw (a
 * throw is attached as suppressed); the interrupt this call made is cleared before it returns. The
 * interrupt is only ever delivered while the work runs: never after the call has left it.
 */
final class LockedCall<T> {
    private final Thread worker = Thread.currentThread();
    private final ReentrantLock state = new ReentrantLock();
    private boolean running = true;       // guarded by state
    private LeaseLostException lost;      // guarded by state

    private LockedCall() {}

    static <T> T call(LockManager manager, String key, Duration maxWait, LeaseOptions options, Callable<T> work)
            throws Exception {
        return new LockedCall<T>().run(manager.acquire(key, maxWait, options), work);
    }

    private T run(Lease lease, Callable<T> work) throws Exception {
        lease.onLost(this::interruptWork);
        T result;
        try {
            result = work.call();
        } catch (Throwable e) {
            LeaseLostException cause = workEnded();
            if (cause != null) {
                cause.addSuppressed(e);
                throw cause;
            }
            try {
                lease.release();
            } catch (RuntimeException r) {
                e.addSuppressed(r);
            }
            throw e;
        }
        LeaseLostException cause = workEnded();
        if (cause != null) throw cause;
        lease.release(); // throws LeaseLostException if the lease was lost just as the work ended
        return result;
    }

    /** No interrupt from now on; the loss, if there was one during the work (its interrupt cleared). */
    private LeaseLostException workEnded() {
        state.lock();
        try {
            running = false;
            if (lost != null) Thread.interrupted();
            return lost;
        } finally {
            state.unlock();
        }
    }

    private void interruptWork(LeaseLostException cause) {
        state.lock();
        try {
            lost = cause;
            if (running) worker.interrupt();
        } finally {
            state.unlock();
        }
    }
}
