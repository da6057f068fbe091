package dev.latchkey.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The command {@code latchkey run} supervises: started with the terminal's stdin/stdout/stderr,
 * and stoppable as a whole process tree — SIGTERM to the command and every descendant, then
 * SIGKILL to those still alive after a grace period — so work done under a lost lock really stops.
 */
final class ChildProcess {
    private final Process process;
    private final Duration grace;
    private final AtomicBoolean terminating = new AtomicBoolean();

    private ChildProcess(Process process, Duration grace) {
        this.process = process;
        this.grace = grace;
    }

    /** @throws IOException when the command cannot be started (not found, not executable) */
    static ChildProcess start(List<String> command, Duration grace) throws IOException {
        return new ChildProcess(new ProcessBuilder(command).inheritIO().start(), grace);
    }

    /** The command's exit status; {@code 128+n} if signal {@code n} killed it (as the JDK reports it on Unix). */
    int waitFor() throws InterruptedException {
        return process.waitFor();
    }

    boolean isTerminating() {
        return terminating.get();
    }

    /** Starts {@link #terminateAndWait()} on its own thread; for callers that must not block (lease listeners). */
    void terminateAsync() {
        Thread t = new Thread(this::terminateAndWait, "latchkey-terminate");
        t.setDaemon(true);
        t.start();
    }

    /** SIGTERM to the tree, SIGKILL after the grace period; returns once the command has exited or ~grace×2 passed. */
    void terminateAndWait() {
        terminating.set(true);
        // snapshot first: once the command dies its children are re-parented and no longer found
        List<ProcessHandle> tree = new ArrayList<>();
        process.descendants().forEach(tree::add);
        tree.add(process.toHandle());
        tree.forEach(ProcessHandle::destroy);
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                tree.forEach(ProcessHandle::destroyForcibly);
                process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            tree.forEach(ProcessHandle::destroyForcibly);
            Thread.currentThread().interrupt();
        }
    }
}
