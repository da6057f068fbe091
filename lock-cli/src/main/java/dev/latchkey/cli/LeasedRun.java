package dev.latchkey.cli;

import dev.latchkey.Durations;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LockBackendException;
import dev.latchkey.process.LockedProcess;
import dev.latchkey.process.LockedProcess.Guard;
import dev.latchkey.spi.ManagedLease;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * CMD run under an acquired lease, as {@code latchkey run} describes it: the lease is given back only
 * once every process of the job has exited — when CMD's job ends, or, on latchkey's own signal, after
 * the job has been stopped ({@link SignalStop}) — and exactly once. A lease lost while CMD runs stops
 * the job (with {@code stopOnLoss}; the guard does it, within the lease's safety margin) and the status
 * is 76, with one line saying whether CMD was terminated, had ended by itself, or left survivors; without
 * {@code stopOnLoss} one warning says what going on means and CMD's status is kept. A release that
 * fails only because the store is unreachable keeps CMD's status, with a warning: the lease ends at its
 * TTL.
 */
final class LeasedRun {
    private final String key;
    private final List<String> command;
    private final boolean stopOnLoss;
    private final LockedProcess.Leftovers leftovers;
    private final Duration ttl;
    private final Map<String, String> slotEnvironment;
    private final PrintWriter err;

    LeasedRun(String key, List<String> command, boolean stopOnLoss, LockedProcess.Leftovers leftovers, Duration ttl,
              Map<String, String> slotEnvironment, PrintWriter err) {
        this.key = key;
        this.command = command;
        this.stopOnLoss = stopOnLoss;
        this.leftovers = leftovers;
        this.ttl = ttl;
        this.slotEnvironment = slotEnvironment;
        this.err = err;
    }

    /** Runs CMD in {@code guard}'s job under {@code lease}; returns latchkey's exit status. */
    int run(Lease lease, String backend, Guard guard) throws InterruptedException {
        AtomicBoolean released = new AtomicBoolean();
        // completed as soon as CMD has started (or failed to): a signal's hook waits for it, so a
        // signal that comes while CMD is starting still stops CMD
        CompletableFuture<LockedProcess> child = new CompletableFuture<>();
        // then give the lock back; registered before CMD starts, so no signal can leave CMD running without the lock
        SignalStop signalStop = SignalStop.register(child, guard::cancelSlotWait, () -> releaseQuietly(lease, released));
        int status;
        AtomicReference<LeaseLostException> lost = new AtomicReference<>();
        AtomicBoolean warned = new AtomicBoolean();
        // a loss found only by the release at the end came after CMD ended on its own: nothing was terminated
        AtomicBoolean cmdEnded = new AtomicBoolean();
        try {
            try {
                child.complete(LockedProcess.of(command).leftovers(leftovers).stopOnLoss(stopOnLoss)
                        .slotEnvironment(slotEnvironment).start(guard, lease, backend)); // stops the job on loss
            } catch (IOException e) {
                releaseOnce(lease, released);
                return StartFailure.report(e, command.get(0), err);
            } finally {
                child.complete(null); // no-op once started; lets a signal's hook go on after a failed start
            }
            lease.onLost(e -> {
                lost.compareAndSet(null, e);
                if (cmdEnded.get()) return; // nothing left to stop or warn about here: the end of the run reports it
                if (!stopOnLoss) warnIgnored(warned, e);
            });
            status = child.join().waitFor(); // with a termination under way: once the whole tree is gone
            cmdEnded.set(true);
        } finally {
            signalStop.remove();
        }
        // a lease known lost has nothing to give back (and its store may hang a release)
        if (lost.get() == null) releaseAtEnd(lease, released, lost);
        LeaseLostException e = lost.get();
        if (e == null) return status;
        if (stopOnLoss) {
            LockedProcess job = child.join();
            job.awaitTermination(); // a loss signalled just as CMD exited: its kill, if begun, ends first
            String survivors = job.survivors().orElse("");
            err.println("latchkey: lost the lock '" + key + "' while CMD ran" + (!job.isTerminating()
                    ? "; CMD had already ended by itself (status " + status + ")"
                    : !survivors.isEmpty() ? "; CMD was terminated, except " + survivors
                    : "; CMD was terminated" + (e.reason().ranOutLocally() ? " before anyone else could get the lock"
                            : ", but the next holder may have got the lock before")) + ": " + e.getMessage());
            err.flush();
            return ExitCodes.LEASE_LOST;
        }
        warnIgnored(warned, e);
        return status;
    }

    /** The release after CMD ended under a lease not known to be lost. */
    private void releaseAtEnd(Lease lease, AtomicBoolean released, AtomicReference<LeaseLostException> lost) {
        try {
            releaseOnce(lease, released);
        } catch (LeaseLostException e) {
            lost.compareAndSet(null, e);
        } catch (LockBackendException e) {
            // CMD finished under a valid lease; the store is unreachable now, and the lease ends at its TTL
            err.println("latchkey: WARNING: could not release the lock '" + key + "' (it ends at its TTL): "
                    + e.getMessage());
            err.flush();
        }
    }

    /** {@code --on-lost=ignore}: says once, and exactly, what going on means. */
    private void warnIgnored(AtomicBoolean warned, LeaseLostException e) {
        if (!warned.compareAndSet(false, true)) return;
        String nextHolder = e.reason().ranOutLocally()
                ? "who can get it " + Durations.format(ManagedLease.safetyMargin(ttl)) + " after the loss"
                : "who may have it already";
        err.println("latchkey: WARNING: lost the lock '" + key + "' while CMD ran (--on-lost=ignore: CMD was not"
                + " stopped, so it may run beside the next holder, " + nextHolder + "): " + e.getMessage());
        err.flush();
    }

    private static void releaseOnce(Lease lease, AtomicBoolean released) {
        if (released.compareAndSet(false, true)) lease.release();
    }

    private static void releaseQuietly(Lease lease, AtomicBoolean released) {
        try {
            releaseOnce(lease, released);
        } catch (RuntimeException e) {
            // shutting down: a lost or unreachable lease ends at its TTL anyway
        }
    }
}
