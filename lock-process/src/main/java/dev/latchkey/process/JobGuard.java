package dev.latchkey.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The guard of one job: a {@code bash} process ({@code job-guard.bash}) that stops every process of
 * the job on request, and on its own when this JVM dies, which it learns from the end of the pipe
 * this class writes its requests to. {@link LockedProcess} says what the job's processes are and what
 * is guaranteed.
 *
 * <p>Started before the lock is taken, so that bash's start costs the run no time once it holds the
 * lock; given up with {@link #abandon()} when no job comes (the lock was busy), and it exits.
 * Requests are one line each and never block (a few bytes into a pipe): a lease-loss listener may
 * send them from the timer thread, and no request needs a thread.
 */
final class JobGuard {
    private static final String SCRIPT = script();
    /** Made once, so that stopping a job allocates nothing: it may be needed when the heap is full. */
    private static final byte[] STOP = "stop\n".getBytes(StandardCharsets.US_ASCII);

    private final Process process;
    private final OutputStream requests;
    private final ReentrantLock requestLock = new ReentrantLock();
    private boolean stopRequested; // guarded by requestLock
    private boolean used; // guarded by requestLock
    private volatile boolean waitingForSlot;
    private volatile boolean slotWaitCancelled;

    private JobGuard(Process process) {
        this.process = process;
        this.requests = process.getOutputStream();
    }

    /**
     * Starts a guard.
     *
     * @param grace     between SIGTERM and SIGKILL when the job is stopped
     * @param leftovers what to do with processes CMD leaves running when it exits by itself
     * @throws LockedProcess.GuardUnavailableException no {@code bash} on the PATH
     */
    static JobGuard start(Duration grace, LockedProcess.Leftovers leftovers) throws LockedProcess.GuardUnavailableException {
        try {
            return new JobGuard(new ProcessBuilder("bash", "-c", SCRIPT, "latchkey-guard",
                    Long.toString(grace.toMillis()), leftovers.name().toLowerCase(Locale.ROOT))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        } catch (IOException e) {
            throw new LockedProcess.GuardUnavailableException("cannot start bash, which latchkey needs to guard CMD's processes: "
                    + e.getMessage(), e);
        }
    }

    /** CMD's environment will carry {@code LATCHKEY_LEASE_ID=marker}: its descendants are found by it. */
    void mark(String marker) {
        request("mark " + marker);
    }

    /**
     * Has the guard take the lock's {@link JobSlot}, and returns once it holds it (at once, unless the
     * previous job of the lock on this host is still being stopped, which the guard then says on
     * stderr). {@link #cancelSlotWait()} ends the wait.
     *
     * @throws LockedProcess.GuardUnavailableException the guard ended, or the wait was cancelled: CMD must not start
     */
    void takeSlot(Path slot) throws LockedProcess.GuardUnavailableException {
        request("slot " + slot);
        waitingForSlot = true;
        String answer;
        try {
            answer = new String(process.getInputStream().readNBytes(6), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            answer = "";
        } finally {
            waitingForSlot = false;
        }
        if (!answer.equals("ready\n")) {
            process.destroyForcibly();
            throw new LockedProcess.GuardUnavailableException(slotWaitCancelled
                    ? "CMD was not started: stopped while the previous job of this lock was still ending"
                    : "CMD was not started: its guard process ended before it was ready (see above)", null);
        }
    }

    /**
     * From a signal's shutdown hook: a wait for the slot ends (the guard ignores signals, and its
     * flock(1) with it, so it is killed), and CMD is not started. Does nothing once CMD runs.
     */
    void cancelSlotWait() {
        if (!waitingForSlot) return;
        slotWaitCancelled = true;
        process.destroyForcibly(); // no job yet: nothing of it to stop
    }

    /** CMD runs as {@code pid}: the root of the tree to stop. */
    void job(long pid) {
        request("job " + pid);
    }

    /** CMD exited by itself: the guard deals with its leftovers, then exits. */
    void ended() {
        request("ended");
    }

    /**
     * Asks the guard to stop the job; returns at once. Idempotent. A request that cannot be written
     * for any reason but the guard's own end (the heap is full, so even a lock's queue node cannot
     * be allocated) halts this JVM instead: the guard reads the pipe's end and kills the job, so a
     * lost lease never leaves it running.
     */
    void stop() {
        try {
            requestLock.lock();
            try {
                if (stopRequested) return;
                stopRequested = true;
            } finally {
                requestLock.unlock();
            }
            request(STOP);
        } catch (Throwable t) {
            Runtime.getRuntime().halt(70); // EX_SOFTWARE; no hook, no thread, no allocation: the guard takes over
        }
    }

    boolean stopRequested() {
        requestLock.lock();
        try {
            return stopRequested;
        } finally {
            requestLock.unlock();
        }
    }

    /** No job came (the lock was busy, the backend failed): the guard exits by itself. */
    void abandon() {
        requestLock.lock();
        try {
            if (used) return;
        } finally {
            requestLock.unlock();
        }
        try {
            requests.close();
        } catch (IOException e) {
            // it has ended already
        }
    }

    /** Returns once the guard has finished: the job's processes it found have ended. */
    void awaitExit() throws InterruptedException {
        process.waitFor();
    }

    /**
     * After {@link #awaitExit()}: the processes the guard could not stop (it named them on stderr), or
     * an empty text. A guard that ended otherwise than as designed leaves the whole job unconfirmed.
     */
    String survivors() {
        return switch (process.exitValue()) {
            case 0 -> "";
            case 3 -> "processes of CMD that latchkey may not signal (another user's; listed above)";
            default -> "CMD's processes, unconfirmed: the guard ended with status " + process.exitValue();
        };
    }

    private void request(String line) {
        request((line + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private void request(byte[] line) {
        requestLock.lock();
        try {
            used = true;
            requests.write(line);
            requests.flush();
        } catch (IOException e) {
            // the guard has ended (killed from outside): survivors() says so once it is reaped
        } finally {
            requestLock.unlock();
        }
    }

    private static String script() {
        try (InputStream in = JobGuard.class.getResourceAsStream("job-guard.bash")) {
            if (in == null) throw new IllegalStateException("job-guard.bash is missing from latchkey's jar");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
