package dev.latchkey.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Finding the processes a test's CMD started, by the pids it wrote to a file. */
final class ProcessTrees {
    /**
     * "Soon" after a signal or a loss: generous for a loaded 2-core machine, far below the ten
     * minutes the test commands would run if nothing stopped them.
     */
    static final Duration SOON = Duration.ofSeconds(20);
    private static final long HANG_GUARD_NANOS = TimeUnit.MINUTES.toNanos(3);

    private ProcessTrees() {}

    /**
     * Waits until {@code file} exists (the command writes it atomically), then returns the processes
     * whose pids it lists, blank-separated; fails if {@code owner} ends first.
     */
    static List<ProcessHandle> awaitPids(Path file, Future<?> owner) throws IOException, InterruptedException {
        List<ProcessHandle> found = new ArrayList<>();
        for (String pid : awaitFile(file, owner).trim().split("\\s+")) {
            found.add(ProcessHandle.of(Long.parseLong(pid))
                    .orElseThrow(() -> new AssertionError("process " + pid + " ended before it was looked up")));
        }
        return found;
    }

    /** Exited, or a zombie (which the JDK reports as alive). */
    static boolean hasExited(ProcessHandle p) {
        if (!p.isAlive()) return true;
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"), StandardCharsets.UTF_8);
            int end = stat.lastIndexOf(')'); // the command name in parentheses may itself hold spaces and ')'
            char state = end >= 0 && end + 2 < stat.length() ? stat.charAt(end + 2) : '?';
            return state == 'Z' || state == 'X';
        } catch (NoSuchFileException e) {
            return true; // gone between the two looks
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Waits until {@code file} exists (the command writes it atomically) and returns its text; fails if {@code owner} ends first. */
    static String awaitFile(Path file, Future<?> owner) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + HANG_GUARD_NANOS;
        while (!Files.exists(file)) {
            if (owner.isDone()) throw new AssertionError("the command ended before writing " + file);
            if (System.nanoTime() > deadline) throw new AssertionError("no " + file);
            Thread.sleep(20); // polls the condition "the command wrote its file"
        }
        return Files.readString(file, StandardCharsets.UTF_8);
    }
}
