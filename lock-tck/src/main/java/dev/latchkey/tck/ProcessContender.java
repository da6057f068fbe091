package dev.latchkey.tck;

import dev.latchkey.Durations;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One contender process of the multi-process test ({@link MultiProcessContention}). It opens a
 * manager for the URI in the environment variable {@value #URI_ENV} (not an argument: URIs may
 * hold credentials, and arguments are visible to every user), signals readiness, waits for the
 * common start signal, then runs {@code rounds} critical sections on one key:
 * acquire → append {@code enter <pid> <round> <token> <leaseId>} to the shared log → read,
 * increment and rewrite the shared counter file → append {@code exit …} → release.
 *
 * <p>Each log line is one {@code O_APPEND} write, so lines of different processes never tear;
 * if two processes were ever inside at once, the log shows an {@code enter} not directly followed
 * by its own {@code exit}, and the counter falls short. Exit status 0 on success, 1 on any error,
 * 3 when its standard input ends (the parent process died: nobody is left to audit or kill it).
 *
 * <p>Arguments, as {@code name=value}: {@code key}, {@code rounds}, {@code log}, {@code counter},
 * {@code ready} (file created once the manager is open), {@code go} (file awaited before the first
 * round), optional {@code ttl} (default 30s), {@code wait} (default 120s), {@code pause} (default
 * 100ms: the longest random pause after each release, so that the processes hand over).
 *
 * <p>With {@code mode=hold} it instead acquires {@code key} once (arguments {@code key},
 * {@code ready}, {@code ttl}), writes the lease's fencing token to the {@code ready} file and
 * keeps the lease, heartbeat on, until it is killed: a holder for crash tests.
 */
public final class ProcessContender {
    /** Environment variable carrying the backend URI. */
    public static final String URI_ENV = "LATCHKEY_TCK_URI";

    private ProcessContender() {}

    public static void main(String[] args) {
        exitWhenParentDies();
        try {
            run(parse(args));
            System.exit(0);
        } catch (Exception | AssertionError e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(Map<String, String> a) throws Exception {
        String uri = System.getenv(URI_ENV);
        if (uri == null || uri.isBlank()) throw new IllegalArgumentException(URI_ENV + " is not set");
        if (a.getOrDefault("mode", "contend").equals("hold")) {
            holdUntilKilled(uri, a);
            return;
        }
        String key = require(a, "key");
        int rounds = Integer.parseInt(require(a, "rounds"));
        Path log = Paths.get(require(a, "log"));
        Path counter = Paths.get(require(a, "counter"));
        Duration ttl = Durations.parse(a.getOrDefault("ttl", "30s"));
        Duration wait = Durations.parse(a.getOrDefault("wait", "120s"));
        long pauseMillis = Durations.parse(a.getOrDefault("pause", "100ms")).toMillis();
        long pid = ProcessHandle.current().pid();
        LeaseOptions options = LeaseOptions.ttl(ttl).withOwner("tck-process-" + pid);

        try (LockManager locks = Latchkey.open(uri);
             FileChannel out = FileChannel.open(log, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.APPEND)) {
            Files.createFile(Paths.get(require(a, "ready")));
            awaitFile(Paths.get(require(a, "go")), Duration.ofMinutes(2));
            for (int round = 0; round < rounds; round++) {
                Lease lease = locks.acquire(key, wait, options);
                String id = pid + " " + round + " " + lease.fencingToken() + " " + lease.leaseId();
                append(out, "enter " + id);
                if (!lease.isValid()) throw new AssertionError("lease invalid right after acquire: " + id);
                increment(counter);
                append(out, "exit " + id);
                lease.release();
                // Give the others a chance: an engine re-takes its own released key before polling
                // waiters look, and the processes would otherwise run in blocks, racing only at the start.
                Thread.sleep(ThreadLocalRandom.current().nextLong(pauseMillis + 1));
            }
        }
    }

    /**
     * The parent keeps our stdin open for as long as it lives; end of input means it is gone, and
     * a holder left behind would keep its lock (and a JVM) for ever.
     */
    private static void exitWhenParentDies() {
        Thread watchdog = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // nothing is ever sent; only the end of the stream matters
                }
            } catch (IOException e) {
                // treated like end of input
            }
            Runtime.getRuntime().halt(3);
        }, "parent-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    private static void holdUntilKilled(String uri, Map<String, String> a) throws Exception {
        LockManager locks = Latchkey.open(uri);
        Duration ttl = Durations.parse(a.getOrDefault("ttl", "30s"));
        Lease lease = locks.acquire(require(a, "key"), Duration.ofMinutes(2),
                LeaseOptions.ttl(ttl).withOwner("tck-doomed-" + ProcessHandle.current().pid()));
        Path ready = Paths.get(require(a, "ready"));
        Path tmp = Paths.get(ready + ".tmp");
        Files.writeString(tmp, Long.toString(lease.fencingToken()));
        Files.move(tmp, ready, java.nio.file.StandardCopyOption.ATOMIC_MOVE); // readers never see it half-written
        Thread.sleep(Long.MAX_VALUE);
    }

    /** The unprotected read-modify-write that a second holder would corrupt. */
    private static void increment(Path counter) throws IOException {
        long value;
        try {
            value = Long.parseLong(Files.readString(counter).trim());
        } catch (NoSuchFileException e) {
            value = 0;
        }
        Thread.yield();
        Files.writeString(counter, Long.toString(value + 1));
    }

    private static void append(FileChannel out, String line) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        int written = out.write(buf); // one write(2) on an O_APPEND file: the line lands whole
        if (buf.hasRemaining()) throw new IOException("short append (" + written + " bytes)");
    }

    private static void awaitFile(Path file, Duration limit) throws InterruptedException {
        long start = System.nanoTime();
        while (!Files.exists(file)) {
            if (System.nanoTime() - start > limit.toNanos()) throw new IllegalStateException("no start signal " + file);
            Thread.sleep(5);
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("expected name=value, got " + arg);
            m.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return m;
    }

    private static String require(Map<String, String> a, String name) {
        String v = a.get(name);
        if (v == null) throw new IllegalArgumentException("missing argument " + name + "=…");
        return v;
    }
}
