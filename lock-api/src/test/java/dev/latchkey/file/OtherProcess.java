package dev.latchkey.file;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second operating-system process for tests, since a JVM cannot see its own OS locks:
 * <ul>
 *   <li>{@code hold-and-die DIR KEY}: acquires KEY on {@code file://DIR}, prints the token and
 *       halts without releasing, as a killed holder would;</li>
 *   <li>{@code probe FILE OFFSET...}: prints, per byte offset of FILE, {@code held} if another
 *       process holds an OS lock on it, else {@code free}.</li>
 * </ul>
 */
public final class OtherProcess {
    public static void main(String[] args) throws IOException {
        switch (args[0]) {
            case "hold-and-die" -> {
                LockManager locks = Latchkey.open("file://" + args[1]);
                System.out.println(locks.tryAcquire(args[2]).orElseThrow().fencingToken());
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
            case "probe" -> {
                try (FileChannel ch = FileChannel.open(Path.of(args[1]), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    List<String> out = new ArrayList<>();
                    for (int i = 2; i < args.length; i++) {
                        FileLock l = ch.tryLock(Long.parseLong(args[i]), 1, false);
                        out.add(l == null ? "held" : "free");
                        if (l != null) l.release();
                    }
                    System.out.println(String.join(" ", out));
                }
            }
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    /** Runs a mode in a new JVM with this JVM's class path; its standard output, trimmed. */
    static String run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), OtherProcess.class.getName()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("latchkey-other-process", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            boolean exited = p.waitFor(60, TimeUnit.SECONDS);
            if (!exited) p.destroyForcibly();
            String output = Files.readString(out).trim();
            if (!exited || p.exitValue() != 0) {
                throw new IllegalStateException("child " + String.join(" ", args) + " failed: " + output);
            }
            return output;
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
