package dev.latchkey.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The command {@code latchkey run} supervises, started with the terminal's stdin/stdout/stderr,
 * beside a guard process that stops every process of it — also after this JVM has died.
 *
 * <p><b>Guarantee.</b> The job's <em>members</em> are the command's process tree as it is at each
 * look, and every process whose environment carries the job's marker ({@code LATCHKEY_LEASE_ID} of
 * the lease, which descendants inherit also when they leave the tree: {@code setsid}, a double
 * fork, a daemon). The guard, a {@code bash} started before the command and fed by a pipe from this
 * JVM ({@code job-guard.bash}), watches that pipe:
 * <ul>
 *   <li>{@link #terminate()} asks it to stop the job: SIGTERM to every member, SIGKILL after the
 *       grace to every member still running and every one found since; a write to a pipe, so it
 *       needs no thread and never blocks;</li>
 *   <li>when the command exits by itself, the members it left running are waited for
 *       ({@link Leftovers#wait}) or stopped like that ({@link Leftovers#kill});</li>
 *   <li>when this JVM dies (SIGKILL, a crash, the OOM killer), the pipe's end is read and every
 *       member gets SIGKILL at once.</li>
 * </ul>
 * {@link #waitFor()} returns once the command has exited and the guard has finished: no member is
 * left running, except those reported by {@link #survivors()} (processes of another user that
 * this user may not signal, e.g. through {@code sudo}). Zombies count as ended. Not members, and so
 * not stopped: a process that left the tree before a look found it <em>and</em> cleared its
 * environment; a process that only the guard could stop when the guard itself was SIGKILLed too
 * (a kill of the whole process group reaches the command as well, except what left its group).
 */
final class ChildProcess {
    /** What happens to processes the command leaves running when it exits by itself. */
    enum Leftovers { wait, kill }

    private static final String GUARD_SCRIPT = guardScript();

    private final Process process;
    private final Process guard;
    private final OutputStream requests;
    private final ReentrantLock requestLock = new ReentrantLock();
    private boolean stopRequested; // guarded by requestLock

    private ChildProcess(Process process, Process guard) {
        this.process = process;
        this.guard = guard;
        this.requests = guard.getOutputStream();
    }

    /**
     * Starts the guard, then {@code command} with latchkey's environment as {@code environment}
     * edits it.
     *
     * @param marker the value of {@code LATCHKEY_LEASE_ID} the command's environment carries, or
     *               null when it carries none (its descendants are then found by the tree alone)
     * @param slot   the lock's {@link JobSlot}, which the guard takes before CMD starts, or empty
     * @param grace  between SIGTERM and SIGKILL when the job is stopped
     * @param abandoned true once latchkey is stopping: ends a wait for the slot, and CMD is not started
     * @throws IOException when the command cannot be started (not found, not executable), or no
     *                     guard could be (no {@code bash} on the PATH; {@link GuardUnavailableException})
     * @throws InterruptedException while waiting for the slot
     */
    static ChildProcess start(List<String> command, Consumer<Map<String, String>> environment, String marker,
                              Optional<Path> slot, Duration grace, Leftovers leftovers, BooleanSupplier abandoned)
            throws IOException, InterruptedException {
        Process guard;
        try {
            guard = new ProcessBuilder("bash", "-c", GUARD_SCRIPT, "latchkey-guard", Long.toString(grace.toMillis()),
                    leftovers.name(), marker == null ? "" : marker, slot.map(Path::toString).orElse(""))
                    .redirectOutput(slot.isPresent() ? ProcessBuilder.Redirect.PIPE : ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
        } catch (IOException e) {
            throw new GuardUnavailableException("cannot start bash, which latchkey needs to guard CMD's processes: "
                    + e.getMessage(), e);
        }
        if (slot.isPresent()) awaitSlot(guard, abandoned);
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        environment.accept(builder.environment());
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            guard.getOutputStream().close(); // nothing to guard: the guard ends at once
            throw e;
        }
        ChildProcess child = new ChildProcess(process, guard);
        child.request("job " + process.pid());
        return child;
    }

    /**
     * Returns once the guard holds the job's slot (at once, unless the previous job of the lock on
     * this host is still being stopped). Polls, so that a signal to latchkey ({@code abandoned})
     * ends the wait: the guard ignores signals and its flock(1) with it.
     */
    private static void awaitSlot(Process guard, BooleanSupplier abandoned) throws IOException, InterruptedException {
        InputStream ready = guard.getInputStream();
        long pause = 0;
        while (ready.available() == 0) {
            if (!guard.isAlive() || abandoned.getAsBoolean()) break;
            Thread.sleep(pause);
            pause = Math.min(pause + 1, 10);
        }
        byte[] line = ready.available() >= 6 ? ready.readNBytes(6) : new byte[0];
        if (!"ready\n".equals(new String(line, StandardCharsets.US_ASCII))) {
            guard.destroyForcibly();
            throw new GuardUnavailableException(abandoned.getAsBoolean()
                    ? "CMD was not started: stopped while the previous job of this lock was still ending"
                    : "CMD was not started: its guard process ended before it was ready (see above)", null);
        }
    }

    /** No guard could be started: CMD was not started either. */
    static final class GuardUnavailableException extends IOException {
        GuardUnavailableException(String message, IOException cause) {
            super(message, cause);
        }
    }

    /**
     * The command's exit status ({@code 128+n} if signal {@code n} killed it, as the JDK reports it on
     * Unix), once it has exited and the guard has finished with the rest of the job.
     */
    int waitFor() throws InterruptedException {
        int status = process.waitFor();
        request("ended");
        awaitTermination();
        return status;
    }

    /** Returns once the guard has finished: the command and every member it found have ended. */
    void awaitTermination() throws InterruptedException {
        guard.waitFor();
    }

    /** True once {@link #terminate()} was called. */
    boolean isTerminating() {
        requestLock.lock();
        try {
            return stopRequested;
        } finally {
            requestLock.unlock();
        }
    }

    /**
     * Asks the guard to stop the job as the class describes; returns at once (callers include
     * lease-loss listeners on the timer thread). Idempotent.
     */
    void terminate() {
        requestLock.lock();
        try {
            if (stopRequested) return;
            stopRequested = true;
        } finally {
            requestLock.unlock();
        }
        request("stop");
    }

    /**
     * After {@link #awaitTermination()}: the members the guard could not stop (it prints them on
     * stderr), or an empty list. A guard that ended otherwise than as designed counts as leaving the
     * whole job unconfirmed.
     */
    String survivors() {
        return switch (guard.exitValue()) {
            case 0 -> "";
            case 3 -> "processes of CMD that latchkey may not signal (another user's; listed above)";
            default -> "CMD's processes, unconfirmed: the guard ended with status " + guard.exitValue();
        };
    }

    private void request(String line) {
        requestLock.lock();
        try {
            requests.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
            requests.flush();
        } catch (IOException e) {
            // the guard has ended (killed from outside): survivors() says so once it is reaped
        } finally {
            requestLock.unlock();
        }
    }

    private static String guardScript() {
        try (InputStream in = ChildProcess.class.getResourceAsStream("job-guard.bash")) {
            if (in == null) throw new IllegalStateException("job-guard.bash is missing from latchkey's jar");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
