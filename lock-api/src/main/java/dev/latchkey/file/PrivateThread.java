package dev.latchkey.file;

import dev.latchkey.LockBackendException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One daemon thread that runs file operations which an interrupt must not break, and is itself
 * never interrupted.
 *
 * <p>Why: Java closes a {@link java.nio.channels.FileChannel} when a thread is interrupted inside
 * one of its interruptible operations (a blocking {@code lock}, {@code read}, {@code write},
 * {@code force}), and closing any channel of a file drops every OS lock the JVM holds on that file. A caller that is interrupted while it waits here keeps waiting (the operations are
 * short) and gets its interrupt status back afterwards.
 *
 * <p>The thread starts with the first operation and then stays. If it cannot be started (the
 * process is at its thread limit), that operation fails with a retriable
 * {@link LockBackendException} and the next one tries again.
 */
final class PrivateThread {
    private final ExecutorService thread;

    PrivateThread(String name) {
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Runs {@code op} on this thread and returns its result; a failure becomes a
     * {@link LockBackendException} saying {@code what} failed (one thrown by {@code op} passes unchanged).
     */
    <T> T call(Callable<T> op, String what) {
        Future<T> f;
        try {
            f = thread.submit(op);
        } catch (RuntimeException | Error e) {
            throw new LockBackendException(what + " failed: could not start its thread (" + e + "); the process or"
                    + " its container may be at its thread limit (ulimit -u, a cgroup's pids.max)", true, e);
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the operation must finish either way; the caller hears of it after
                }
            }
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof LockBackendException lbe) throw lbe;
            throw new LockBackendException(what + " failed: " + c, true, c);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
