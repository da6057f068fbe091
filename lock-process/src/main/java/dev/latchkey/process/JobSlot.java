package dev.latchkey.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The host-local slot of one lock: a file that the guard of the job holding the lock keeps under an
 * exclusive {@code flock(2)} from before CMD starts until every process of the job has ended
 * ({@code job-guard.bash}). The next job of the same lock on this host starts its CMD only once it
 * holds the slot.
 *
 * <p><b>Why.</b> Some stores free a key the instant the holder's JVM dies ({@code file://}'s OS lock,
 * a PostgreSQL advisory session), while the guard is still killing the dead holder's job. The slot
 * closes that window for every contender of this user on this host, on every backend, and also keeps
 * a job whose latchkey is frozen (SIGSTOP, its lease expired) from running beside the next — the
 * model is {@code flock(1)}, whose lock lives as long as a process holding it.
 *
 * <p><b>Where.</b> {@code $XDG_RUNTIME_DIR/latchkey-jobs}, else {@code /tmp/latchkey-jobs-UID}, a
 * directory of this user's only (mode 0700; one that is not is not used, and no slot is taken:
 * another user could hold a slot forever). A slot is named by a hash of the backend's masked
 * description and the key: URIs that name the same locks differently get different slots, and
 * contenders of other users or hosts are not held back (docs/semantics.md, job containment).
 */
final class JobSlot {
    private JobSlot() {}

    /** The slot of {@code key} on the backend described as {@code backend}, or empty where no safe directory is found. */
    static Optional<Path> of(String backend, String key, Map<String, String> env) {
        try {
            Path dir = directory(env);
            if (dir == null) return Optional.empty();
            return Optional.of(dir.resolve(hash(backend + "\n" + key)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Path directory(Map<String, String> env) throws IOException {
        Integer euid = effectiveUid();
        if (euid == null) return null;
        int uid = euid;
        String runtime = env.get("XDG_RUNTIME_DIR");
        Path dir = runtime != null && !runtime.isBlank() && Path.of(runtime).isAbsolute()
                ? Path.of(runtime, "latchkey-jobs") : Path.of("/tmp", "latchkey-jobs-" + uid);
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (java.nio.file.FileAlreadyExistsException raced) {
                // another latchkey made it: checked below like any other
            }
        }
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
        boolean ours = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS) == uid
                && Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
                && mode.stream().noneMatch(p -> p.name().startsWith("GROUP_") || p.name().startsWith("OTHERS_"));
        return ours ? dir : null;
    }

    /**
     * This process's effective uid, from {@code /proc/self/status}; null without {@code /proc}. Not the
     * owner of {@code /proc/self}: that is a symbolic link, owned by root whoever reads it.
     */
    private static Integer effectiveUid() throws IOException {
        Path status = Path.of("/proc/self/status");
        if (!Files.isReadable(status)) return null;
        for (String line : Files.readAllLines(status, StandardCharsets.US_ASCII)) {
            if (line.startsWith("Uid:")) return Integer.valueOf(line.substring(4).trim().split("\\s+")[1]);
        }
        return null;
    }

    /**
     * FNV-1a, 64 bits: no digest provider to load at every start. Two locks whose names collide share a
     * slot, which only makes one job wait for the other's end: never unsafe.
     */
    private static String hash(String text) {
        long h = 0xcbf29ce484222325L;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return Long.toHexString(h);
    }
}
