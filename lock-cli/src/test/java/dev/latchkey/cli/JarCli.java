package dev.latchkey.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

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
            awaitText("stdout", out, text);
        }

        /** Waits until stderr contains {@code text}; fails if the process ends first. */
        void awaitErr(String text) throws IOException, InterruptedException {
            awaitText("stderr", err, text);
        }

        private void awaitText(String name, Path stream, String text) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
            while (!Files.readString(stream, StandardCharsets.UTF_8).contains(text)) {
                if (!process.isAlive() && !Files.readString(stream, StandardCharsets.UTF_8).contains(text)) {
                    throw new AssertionError("latchkey exited " + process.exitValue() + " before printing '" + text
                            + "' on " + name + "; stderr: " + err());
                }
                if (System.nanoTime() > deadline) throw new AssertionError("no '" + text + "' on " + name + "; stderr: " + err());
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
        return start(dir, Map.of(), args);
    }

    /** As {@link #start(Path, String...)}, with {@code env} added to the child's environment. */
    static Running start(Path dir, Map<String, String> env, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(JAVA);
        command.addAll(JVM_OPTIONS);
        Cds cds = Cds.of(args);
        boolean training = false;
        if (cds != null && cds.ready) {
            command.addAll(cds.useOptions());
        } else if (cds != null && cds.training.compareAndSet(false, true)) {
            command.add("-XX:DumpLoadedClassList=" + cds.classList);
            training = true;
        }
        command.add("-jar");
        command.add(JAR.toString());
        command.addAll(Arrays.asList(args));
        int n = SEQ.incrementAndGet();
        Path out = dir.resolve("latchkey-" + n + ".out");
        Path err = dir.resolve("latchkey-" + n + ".err");
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Process p = pb.directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (training) p.onExit().thenRunAsync(cds::dump);
        return new Running(p, out, err);
    }

    static Result run(Path dir, String... args) throws IOException, InterruptedException {
        return start(dir, args).await();
    }

    static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    /**
     * A class-data-sharing archive for the lock commands, so that the counter race's 1,600 JVMs start
     * on less CPU (loading and verifying the SDKs' classes is most of a short command's cost: s3://
     * 1.8 → 1.1 CPU-s, azblob:// 2.1 → 1.1; the race took 20 min without, 13.5 with). One per
     * subcommand and URI scheme (an archive of another SDK's classes costs more than it saves), from
     * the classes the first such run loaded, dumped in the background once that run has exited; runs
     * in the meantime go without. Only how fast the JVM starts changes, not what the jar does. The
     * {@code ./latchkey} launcher does not do this. Archives live in {@code target/cds-it};
     * {@code -Dlatchkey.it.cds=false} turns it off.
     */
    static final class Cds {
        private static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("latchkey.it.cds", "true"));
        private static final Path DIR = JAR.resolveSibling("cds-it");
        private static final String JAR_ID = jarId();
        private static final Map<String, Cds> PROFILES = new ConcurrentHashMap<>();
        private static final Pattern SCHEME = Pattern.compile("^([A-Za-z][A-Za-z0-9+.-]*):");

        final Path classList;
        final Path archive;
        final AtomicBoolean training = new AtomicBoolean();
        volatile boolean ready;

        private Cds(String profile) {
            classList = DIR.resolve(profile + "-" + JAR_ID + ".classlist");
            archive = DIR.resolve(profile + "-" + JAR_ID + ".jsa");
            ready = Files.isRegularFile(archive);
        }

        /** The archive for this command line; null for none. */
        static Cds of(String[] args) {
            if (!ENABLED || JAR_ID == null) return null;
            int i = 0;
            String sub = null;
            while (i < args.length) {
                String a = args[i++];
                if (!a.startsWith("-")) {
                    sub = a;
                    break;
                }
            }
            if (sub == null || !List.of("run", "status", "list", "release").contains(sub)) return null;
            String uri = null;
            while (i < args.length && uri == null) {
                String a = args[i++];
                if (a.equals("--")) break;
                if (a.startsWith("--uri=")) uri = a.substring("--uri=".length());
                else if (a.equals("--uri")) uri = i < args.length ? args[i] : "";
                else if (List.of("--key", "--wait", "--ttl", "--grace", "--on-lost").contains(a)) i++;
                else if (!a.startsWith("-") && sub.equals("run")) break;
            }
            if (uri == null || uri.isEmpty()) uri = System.getenv("LATCHKEY_URI");
            if (uri == null || uri.isEmpty()) uri = "file:";
            Matcher m = SCHEME.matcher(uri);
            if (!m.find()) return null;
            String scheme = switch (m.group(1).toLowerCase(Locale.ROOT)) {
                case "file", "mem", "postgres", "clickhouse", "s3", "gs", "azblob" -> m.group(1).toLowerCase(Locale.ROOT);
                case "postgresql" -> "postgres";
                case "azure" -> "azblob";
                default -> null; // a typo gets no archive
            };
            return scheme == null ? null : PROFILES.computeIfAbsent(sub + "-" + scheme, Cds::new);
        }

        List<String> useOptions() {
            return List.of("-Xlog:cds*=off,class+path*=off", "-XX:SharedArchiveFile=" + archive);
        }

        /** Dumps the archive from the class list of the (exited) training run; on any failure there is none. */
        void dump() {
            Path tmp = DIR.resolve(archive.getFileName() + ".tmp");
            try {
                if (Files.size(classList) == 0) return;
                List<String> dump = new ArrayList<>(List.of(JAVA));
                dump.addAll(JVM_OPTIONS);
                dump.addAll(List.of("-XX:ErrorFile=/dev/null", "-XX:-CreateCoredumpOnCrash", "-Xshare:dump",
                        "-XX:SharedClassListFile=" + classList, "-XX:SharedArchiveFile=" + tmp, "-cp", JAR.toString()));
                List<String> check = new ArrayList<>(List.of(JAVA));
                check.addAll(JVM_OPTIONS);
                check.addAll(List.of("-XX:ErrorFile=/dev/null", "-XX:-CreateCoredumpOnCrash", "-Xshare:on",
                        "-XX:SharedArchiveFile=" + tmp, "-cp", JAR.toString(), "-version"));
                if (quietly(dump) && quietly(check)) {
                    Files.move(tmp, archive, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    ready = true;
                }
            } catch (IOException | RuntimeException e) {
                // no archive: the runs just start as they would without
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // left for the next pruning
                }
            }
        }

        private static boolean quietly(List<String> command) throws IOException, InterruptedException {
            Process p = new ProcessBuilder(command).directory(DIR.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (p.waitFor(HANG_GUARD_SECONDS, TimeUnit.SECONDS)) return p.exitValue() == 0;
            p.destroyForcibly();
            return false;
        }

        /** The jar's size and mtime, naming its archives; earlier jars' archives are deleted. Null: no CDS. */
        private static String jarId() {
            try {
                String id = Files.size(JAR) + "-" + Files.getLastModifiedTime(JAR).toMillis();
                Files.createDirectories(DIR);
                try (Stream<Path> files = Files.list(DIR)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        if (!f.getFileName().toString().contains("-" + id + ".")) Files.deleteIfExists(f);
                    }
                }
                return id;
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
    }
}
