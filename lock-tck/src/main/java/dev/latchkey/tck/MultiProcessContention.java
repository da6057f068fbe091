package dev.latchkey.tck;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Mutual exclusion across operating-system processes: starts {@code processes} JVMs of
 * {@link ProcessContender} (with this JVM's class path, so the backend under test is on it), lets
 * them contend on one key together, and then audits the shared log and counter. Use from a test:
 * <pre>{@code
 * MultiProcessContention.Report r = MultiProcessContention.run(uri, "mp-key", 4, 25, tempDir, Duration.ofMinutes(3));
 * assertThat(r.violations()).isEmpty();
 * }</pre>
 * The report lists every overlap (an {@code enter} not directly followed by its own {@code exit}),
 * a short counter (lost updates), a failed or hung process, and — when fencing is expected — every
 * token not greater than the one before it. Each contender pauses at random after its release, so
 * that the processes hand the lock over rather than run in blocks; a run with fewer hand-overs than
 * a fifth of its sections is reported too, because it proved little.
 *
 * <p>A child JVM gets none of this JVM's system properties or options, only those passed as
 * {@code jvmArguments} ({@code -Dname=value}, {@code --add-opens …}; by default
 * {@link #forwardedSystemProperties()}). They reach it in an argument file ({@code java @file}, owner-only)
 * in {@code workDir}, never on its command line, so a value holding a secret does not show in a
 * process listing; they are never printed.
 */
public final class MultiProcessContention {
    private MultiProcessContention() {}

    /**
     * What the audit found.
     *
     * @param sections   critical sections logged
     * @param counter    the shared counter's final value (every section adds one)
     * @param tokens     fencing tokens in order of entry
     * @param violations every problem found, empty when mutual exclusion held
     */
    public record Report(int sections, long counter, List<Long> tokens, List<String> violations) {}

    /**
     * System properties of this JVM that a backend's client commonly reads, as {@code -Dname=value}
     * for a child JVM: everything under {@code latchkey.}, TLS trust and key stores
     * ({@code javax.net.ssl.}, {@code jdk.tls.}) and proxies ({@code http.}, {@code https.},
     * {@code socksProxy}, {@code java.net.useSystemProxies}). The default JVM arguments of every child.
     */
    public static List<String> forwardedSystemProperties() {
        List<String> args = new ArrayList<>();
        Properties props = System.getProperties();
        for (String name : new TreeSet<>(props.stringPropertyNames())) {
            if (FORWARDED_PREFIXES.stream().anyMatch(name::startsWith)) args.add("-D" + name + "=" + props.getProperty(name));
        }
        return args;
    }

    private static final List<String> FORWARDED_PREFIXES = List.of("latchkey.", "javax.net.ssl.", "jdk.tls.",
            "http.", "https.", "socksProxy", "java.net.useSystemProxies");

    /** {@link #run(String, String, int, int, boolean, Path, Duration, List)} with {@link #forwardedSystemProperties()}. */
    public static Report run(String uri, String key, int processes, int rounds, boolean fencing,
                             Path workDir, Duration limit) throws IOException, InterruptedException {
        return run(uri, key, processes, rounds, fencing, workDir, limit, forwardedSystemProperties());
    }

    /**
     * Runs the contenders and audits their log.
     *
     * @param uri      backend URI, passed to the children in an environment variable
     * @param key      the one key they contend on
     * @param fencing  whether tokens must strictly increase (the backend declares FENCING_TOKENS)
     * @param workDir  an empty directory for the log, counter and per-process output
     * @param limit    how long all processes together may take before they are killed
     * @param jvmArguments options for each child JVM, before its main class (see the class comment)
     */
    public static Report run(String uri, String key, int processes, int rounds, boolean fencing,
                             Path workDir, Duration limit, List<String> jvmArguments) throws IOException, InterruptedException {
        Path log = workDir.resolve("sections.log");
        Path counter = workDir.resolve("counter");
        Path go = workDir.resolve("go");
        List<Process> children = new ArrayList<>();
        List<Path> outputs = new ArrayList<>();
        List<String> violations = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                Path out = workDir.resolve("process-" + i + ".out");
                outputs.add(out);
                ProcessBuilder pb = new ProcessBuilder(childCommand(workDir, jvmArguments, ProcessContender.class.getName(),
                        "key=" + key, "rounds=" + rounds, "log=" + log, "counter=" + counter,
                        "ready=" + workDir.resolve("ready-" + i), "go=" + go))
                        .redirectErrorStream(true)
                        .redirectOutput(out.toFile());
                pb.environment().put(ProcessContender.URI_ENV, uri);
                children.add(pb.start());
            }
            long start = System.nanoTime();
            // start them together, once every JVM is up and has its manager open
            for (int i = 0; i < processes; i++) {
                Path ready = workDir.resolve("ready-" + i);
                while (!Files.exists(ready)) {
                    if (!children.get(i).isAlive() || System.nanoTime() - start > limit.toNanos()) {
                        violations.add("process " + i + " never became ready: " + tail(outputs.get(i)));
                        return new Report(0, 0, List.of(), violations);
                    }
                    Thread.sleep(10);
                }
            }
            Files.createFile(go);
            for (int i = 0; i < processes; i++) {
                long left = limit.toNanos() - (System.nanoTime() - start);
                Process p = children.get(i);
                if (!p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
                    violations.add("process " + i + " still running after " + limit.toSeconds() + " s: " + tail(outputs.get(i)));
                } else if (p.exitValue() != 0) {
                    violations.add("process " + i + " exited " + p.exitValue() + ": " + tail(outputs.get(i)));
                }
            }
        } finally {
            for (Process p : children) {
                if (p.isAlive()) p.destroyForcibly();
            }
        }
        return audit(log, counter, processes, processes * rounds, fencing, violations);
    }

    /** {@link #startHolder(String, String, Duration, Path, List)} with {@link #forwardedSystemProperties()}. */
    public static Holder startHolder(String uri, String key, Duration ttl, Path workDir)
            throws IOException, InterruptedException {
        return startHolder(uri, key, ttl, workDir, forwardedSystemProperties());
    }

    /**
     * Starts a JVM that acquires {@code key} (TTL {@code ttl}, heartbeat on) and holds it until
     * killed; returns once it holds the lease. Kill it with {@link Process#destroyForcibly()} to
     * simulate a crashed holder.
     *
     * @param jvmArguments options for the child JVM, before its main class (see the class comment)
     * @return the process and the fencing token of its lease
     */
    public static Holder startHolder(String uri, String key, Duration ttl, Path workDir, List<String> jvmArguments)
            throws IOException, InterruptedException {
        Path ready = workDir.resolve("holder-ready");
        Path out = workDir.resolve("holder.out");
        ProcessBuilder pb = new ProcessBuilder(childCommand(workDir, jvmArguments, ProcessContender.class.getName(), "mode=hold",
                "key=" + key, "ready=" + ready, "ttl=" + ttl.toMillis() + "ms"))
                .redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put(ProcessContender.URI_ENV, uri);
        Process p = pb.start();
        long start = System.nanoTime();
        while (!Files.exists(ready)) {
            if (!p.isAlive() || System.nanoTime() - start > TimeUnit.MINUTES.toNanos(2)) {
                p.destroyForcibly();
                throw new IllegalStateException("holder process did not acquire " + key + ": " + tail(out));
            }
            Thread.sleep(10);
        }
        return new Holder(p, Long.parseLong(Files.readString(ready).trim()));
    }

    /** A process holding a lease, and that lease's fencing token. */
    public record Holder(Process process, long fencingToken) {}

    /** The end of the violation of a run whose processes handed the key over too rarely to prove anything. */
    static final String RACED_TOO_LITTLE = "raced too little for the audit to mean anything";

    /**
     * Whether {@code report} found nothing wrong but that its processes raced too little: a run that
     * proves nothing either way, worth running again (a loaded machine may schedule them in blocks).
     */
    public static boolean racedTooLittle(Report report) {
        return report.violations().size() == 1 && report.violations().get(0).endsWith(RACED_TOO_LITTLE);
    }

    /** Checks the log written by the contenders; adds to {@code violations}. */
    static Report audit(Path log, Path counterFile, int processes, int expected, boolean fencing, List<String> violations)
            throws IOException {
        List<String> lines = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
        List<Long> tokens = new ArrayList<>();
        int sections = 0;
        String inside = null; // the "<pid> <round> <token> <leaseId>" of the open section
        for (int n = 0; n < lines.size(); n++) {
            String line = lines.get(n);
            if (line.startsWith("enter ")) {
                String id = line.substring(6);
                if (inside != null) violations.add("line " + (n + 1) + ": enter " + id + " while " + inside + " was inside");
                inside = id;
                sections++;
                long token = Long.parseLong(id.split(" ")[2]);
                if (fencing && !tokens.isEmpty() && token <= tokens.get(tokens.size() - 1)) {
                    violations.add("line " + (n + 1) + ": token " + token + " after " + tokens.get(tokens.size() - 1));
                }
                tokens.add(token);
            } else if (line.startsWith("exit ")) {
                String id = line.substring(5);
                if (!id.equals(inside)) violations.add("line " + (n + 1) + ": exit " + id + " but inside was " + inside);
                inside = null;
            } else {
                violations.add("line " + (n + 1) + ": unreadable: " + line);
            }
        }
        if (inside != null) violations.add("the log ends inside a section: " + inside);
        int handOvers = handOvers(lines);
        if (processes > 1 && handOvers < sections / 5) {
            violations.add("only " + handOvers + " hand-overs between processes in " + sections
                    + " sections: they ran in blocks and " + RACED_TOO_LITTLE);
        }
        long counter = Files.exists(counterFile) ? Long.parseLong(Files.readString(counterFile).trim()) : 0;
        if (sections != expected) violations.add(sections + " sections logged, expected " + expected);
        if (counter != expected) violations.add("counter is " + counter + " after " + expected + " sections: lost updates");
        return new Report(sections, counter, tokens, violations);
    }

    /** Sections entered by another process than the one before ({@code enter <pid> …} lines). */
    private static int handOvers(List<String> lines) {
        int n = 0;
        String last = null;
        for (String line : lines) {
            if (!line.startsWith("enter ")) continue;
            String pid = line.split(" ")[1];
            if (last != null && !last.equals(pid)) n++;
            last = pid;
        }
        return n;
    }

    /** A command line running {@code mainClass} in a new JVM with this JVM's class path. */
    public static List<String> javaCommand(String mainClass, String... args) {
        List<String> cmd = new ArrayList<>(List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /**
     * {@link #javaCommand} with {@code jvmArguments} in an owner-only argument file in {@code workDir}
     * ({@code @file}, read by the {@code java} launcher), placed before the class path and main class.
     */
    private static List<String> childCommand(Path workDir, List<String> jvmArguments, String mainClass, String... args)
            throws IOException {
        List<String> cmd = javaCommand(mainClass, args);
        if (jvmArguments.isEmpty()) return cmd;
        Path file = Files.createTempFile(workDir, "jvm-", ".args",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        StringBuilder text = new StringBuilder();
        for (String a : jvmArguments) text.append(argFileQuoted(a)).append('\n');
        Files.writeString(file, text);
        cmd.add(1, "@" + file);
        return cmd;
    }

    /**
     * One argument as the {@code java} launcher's argument files read it: in double quotes, with
     * backslash and quote escaped (a line break is refused: an argument file cannot carry one).
     */
    static String argFileQuoted(String argument) {
        if (argument.indexOf('\n') >= 0 || argument.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("a child JVM argument cannot contain a line break: "
                    + argument.substring(0, Math.min(argument.length(), argument.indexOf('=') + 1)) + "…");
        }
        return '"' + argument.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    private static String tail(Path output) {
        try {
            String s = Files.exists(output) ? Files.readString(output) : "";
            return s.length() > 2000 ? "…" + s.substring(s.length() - 2000) : s;
        } catch (IOException e) {
            return "(output unreadable: " + e + ")";
        }
    }
}
