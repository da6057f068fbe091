package dev.latchkey.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs the shaded {@code target/latchkey.jar} as a separate JVM, the way {@code ./latchkey} does,
 * with stdout and stderr captured in files (so an orphaned child holding them never blocks a reader).
 */
final class JarCli {
    static final Path JAR = Path.of(System.getProperty("latchkey.jar", "target/latchkey.jar")).toAbsolutePath();
    /** The JVM options ./latchkey uses for every command but bench: quick start, small heap. */
    static final List<String> JVM_OPTIONS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    /** Hang guard for one invocation; never a performance expectation. */
    private static final long HANG_GUARD_SECONDS = 180;
    private static final AtomicInteger SEQ = new AtomicInteger();

    private JarCli() {}

    record Result(int status, String out, String err) {}

    /** A running latchkey process. */
    static final class Running {
        final Process process;
        private final Path out;
        private final Path err;

        private Running(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        String out() throws IOException {
            return Files.readString(out, StandardCharsets.UTF_8);
        }

        String err() throws IOException {
            return Files.readString(err, StandardCharsets.UTF_8);
        }

        /** Waits until stdout contains {@code text}; fails if the process ends first. */
        void awaitOut(String text) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
            while (!out().contains(text)) {
                if (!process.isAlive() && !out().contains(text)) {
                    throw new AssertionError("latchkey exited " + process.exitValue() + " before printing '" + text
                            + "'; stderr: " + err());
                }
                if (System.nanoTime() > deadline) throw new AssertionError("no '" + text + "' on stdout; stderr: " + err());
                Thread.sleep(20); // polls the condition "text was printed"
            }
        }

        Result await() throws IOException, InterruptedException {
            if (!process.waitFor(HANG_GUARD_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("latchkey did not exit; stderr: " + err());
            }
            return new Result(process.exitValue(), out(), err());
        }
    }

    static Running start(Path dir, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        command.add("-jar");
        command.add(JAR.toString());
        command.addAll(Arrays.asList(args));
        int n = SEQ.incrementAndGet();
        Path out = dir.resolve("latchkey-" + n + ".out");
        Path err = dir.resolve("latchkey-" + n + ".err");
        Process p = new ProcessBuilder(command).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        return new Running(p, out, err);
    }

    static Result run(Path dir, String... args) throws IOException, InterruptedException {
        return start(dir, args).await();
    }
}
