package dev.latchkey.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The command {@code latchkey run} supervises, started with the terminal's stdin/stdout/stderr,
 * and stoppable as a whole process tree.
 *
 * <p><b>Guarantee.</b> {@link #terminate} sends SIGTERM to the command and to every descendant it
 * has at that moment, and once the grace period is over (or all of them have exited) SIGKILL to
 * each of them still running and to every descendant they started meanwhile; its future completes
 * only when every process so found has exited. A zombie counts as exited: it runs nothing, and
 * where no init reaps orphans it would otherwise never end. Not found, and so not stopped: a
 * descendant that left the tree before a walk found it (a double fork or daemon, re-parented to
 * init or a subreaper), and a child forked in the instant between the last walk and its parent's
 * SIGKILL. A process the kernel cannot kill (stuck in uninterruptible I/O) is waited for.
 */
final class ChildProcess {
    /** How often exits are checked: a process that is not our child cannot be waited for, only polled. */
    private static final long POLL_MILLIS = 10;
    private static final boolean PROC_FS = Files.isDirectory(Path.of("/proc/self"));

    private final Process process;
    private final AtomicReference<CompletableFuture<Void>> termination = new AtomicReference<>();

    private ChildProcess(Process process) {
        this.process = process;
    }

    /**
     * Starts {@code command} with latchkey's environment as {@code environment} edits it.
     *
     * @throws IOException when the command cannot be started (not found, not executable)
     */
    static ChildProcess start(List<String> command, Consumer<Map<String, String>> environment) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        environment.accept(builder.environment());
        return new ChildProcess(builder.start());
    }

    /**
     * The command's exit status ({@code 128+n} if signal {@code n} killed it, as the JDK reports it on
     * Unix), once it has exited and, if it is being terminated, its whole tree with it.
     */
    int waitFor() throws InterruptedException {
        int status = process.waitFor();
        awaitTermination();
        return status;
    }

    /** Returns once a termination begun by {@link #terminate} has finished; at once if none was. */
    void awaitTermination() throws InterruptedException {
        CompletableFuture<Void> running = termination.get();
        if (running == null) return;
        try {
            running.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("terminating the command failed", e.getCause());
        }
    }

    boolean isTerminating() {
        return termination.get() != null;
    }

    /**
     * Stops the tree as the class describes, on a thread of its own (callers include lease-loss
     * listeners, which must not block). Idempotent: a second call returns the first one's future.
     */
    CompletableFuture<Void> terminate(Duration grace) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (!termination.compareAndSet(null, done)) return termination.get();
        Thread t = new Thread(() -> {
            try {
                stopTree(grace);
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "latchkey-terminate");
        t.setDaemon(true);
        t.start();
        return done;
    }

    private void stopTree(Duration grace) throws InterruptedException {
        // walk first: once the command dies its children are re-parented and no longer found
        Set<ProcessHandle> tree = walk(List.of(process.toHandle()));
        tree.forEach(ProcessHandle::destroy);
        long graceEnd = System.nanoTime() + grace.toNanos();
        while (!allExited(tree) && System.nanoTime() - graceEnd < 0) Thread.sleep(POLL_MILLIS);
        // walk the survivors again before each round of SIGKILLs, so a child forked during the grace
        // is found while its parent still holds it; stop when a round finds nothing new
        boolean grew = true;
        while (grew) {
            Set<ProcessHandle> round = walk(running(tree));
            grew = tree.addAll(round);
            round.forEach(ProcessHandle::destroyForcibly);
        }
        while (!allExited(tree)) Thread.sleep(POLL_MILLIS);
    }

    /** The given processes and all their descendants. */
    private static Set<ProcessHandle> walk(Collection<ProcessHandle> roots) {
        Set<ProcessHandle> found = new LinkedHashSet<>();
        for (ProcessHandle root : roots) {
            found.add(root);
            root.descendants().forEach(found::add);
        }
        return found;
    }

    private static List<ProcessHandle> running(Collection<ProcessHandle> processes) {
        List<ProcessHandle> running = new ArrayList<>();
        for (ProcessHandle p : processes) {
            if (!hasExited(p)) running.add(p);
        }
        return running;
    }

    private static boolean allExited(Collection<ProcessHandle> processes) {
        return running(processes).isEmpty();
    }

    /** Exited, or a zombie (which the JDK reports as alive). */
    static boolean hasExited(ProcessHandle p) {
        return !p.isAlive() || isZombie(p.pid());
    }

    /** Linux: state Z or X in {@code /proc/PID/stat}. Elsewhere false, and {@link ProcessHandle#isAlive} decides. */
    private static boolean isZombie(long pid) {
        if (!PROC_FS) return false;
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
            int end = stat.lastIndexOf(')'); // the command name in parentheses may itself hold spaces and ')'
            char state = end >= 0 && end + 2 < stat.length() ? stat.charAt(end + 2) : '?';
            return state == 'Z' || state == 'X';
        } catch (NoSuchFileException e) {
            return true; // gone between the two looks
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
