package dev.latchkey.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The command {@code latchkey run} supervises, started with the terminal's stdin/stdout/stderr,
 * beside a {@link JobGuard} that stops every process of it — also after this JVM has died.
 *
 * <p><b>Guarantee.</b> The job's <em>members</em> are the command's process tree as it is at each
 * look, and every process whose environment carries the job's marker ({@code LATCHKEY_LEASE_ID} of
 * the lease, which descendants inherit also when they leave the tree: {@code setsid}, a double
 * fork, a daemon). The guard, fed by a pipe from this JVM:
 * <ul>
 *   <li>on {@link #terminate()}, stops the job: SIGTERM to every member, SIGKILL after the grace to
 *       every member still running and every one found since;</li>
 *   <li>when the command exits by itself, waits for the members it left running
 *       ({@link Leftovers#wait}) or stops them like that ({@link Leftovers#kill});</li>
 *   <li>when this JVM dies (SIGKILL, a crash, the OOM killer), reads the pipe's end and sends every
 *       member SIGKILL at once;</li>
 *   <li>with a {@link JobSlot}, holds it from before the command starts until it exits, so that the
 *       next job of the lock on this host starts only once this one's members are gone.</li>
 * </ul>
 * {@link #waitFor()} returns once the command has exited and the guard has finished: no member is
 * left running, except those reported by {@link #survivors()} (processes of another user that
 * this user may not signal, e.g. through {@code sudo}). Zombies count as ended. Not members, and so
 * not stopped: a process that left the tree before a look found it <em>and</em> cleared its
 * environment; and when the guard itself is SIGKILLed too (a kill of the whole process group), what
 * the command moved out of its group.
 */
final class ChildProcess {
    /** What happens to processes the command leaves running when it exits by itself. */
    enum Leftovers { wait, kill }

    private final Process process;
    private final JobGuard guard;

    private ChildProcess(Process process, JobGuard guard) {
        this.process = process;
        this.guard = guard;
    }

    /**
     * Starts {@code command}, with latchkey's environment as {@code environment} edits it, under
     * {@code guard}.
     *
     * @param marker    the value of {@code LATCHKEY_LEASE_ID} the command's environment carries, or
     *                  null when it carries none (its descendants are then found by the tree alone)
     * @param slot      the lock's {@link JobSlot}, taken by the guard before the command starts, or empty
     * @throws IOException when the command cannot be started (not found, not executable), or the
     *                     guard could not take the slot ({@link JobGuard.GuardUnavailableException})
     */
    static ChildProcess start(List<String> command, Consumer<Map<String, String>> environment, JobGuard guard,
                              String marker, Optional<Path> slot)
            throws IOException {
        if (marker != null) guard.mark(marker);
        if (slot.isPresent()) guard.takeSlot(slot.get());
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        environment.accept(builder.environment());
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            guard.ended(); // nothing ran: the guard finds no member and exits
            throw e;
        }
        guard.job(process.pid());
        return new ChildProcess(process, guard);
    }

    /**
     * The command's exit status ({@code 128+n} if signal {@code n} killed it, as the JDK reports it on
     * Unix), once it has exited and the guard has finished with the rest of the job.
     */
    int waitFor() throws InterruptedException {
        int status = process.waitFor();
        guard.ended();
        guard.awaitExit();
        return status;
    }

    /** Returns once the guard has finished: the command and every member it found have ended. */
    void awaitTermination() throws InterruptedException {
        guard.awaitExit();
    }

    /** True once {@link #terminate()} was called. */
    boolean isTerminating() {
        return guard.stopRequested();
    }

    /** Asks the guard to stop the job; returns at once (callers include lease-loss listeners on the timer thread). */
    void terminate() {
        guard.stop();
    }

    /** After {@link #awaitTermination()}: what the guard could not stop, or an empty text. */
    String survivors() {
        return guard.survivors();
    }
}
