package dev.latchkey.bench;

import dev.latchkey.spi.LockUri;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Floor of {@code file://DIR}: an OS lock ({@link FileChannel#lock()}) taken and released on an
 * already open file in the same directory — the kernel round trip every file lock pays, without
 * reading or writing a lease record. The file ({@code .latchkey-bench-floor}) is deleted on close.
 * Under contention, key {@code i} is byte {@code i} of that file, locked with
 * {@link FileChannel#tryLock(long, long, boolean)} on each session's own channel: a byte another
 * thread of this JVM holds (the JDK's {@link OverlappingFileLockException}) or another process holds
 * is busy, as a held key is for the lock.
 */
public final class FileBaseline implements Baseline {

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("file");
    }

    @Override
    public Kind kind() {
        return Kind.FLOOR;
    }

    @Override
    public String description() {
        return "FileChannel.lock+release";
    }

    @Override
    public boolean hasSpread(LockUri uri) {
        return true;
    }

    @Override
    public Session open(LockUri uri) throws Exception {
        Path dir = directory(uri);
        Files.createDirectories(dir);
        Path file = dir.resolve(".latchkey-bench-floor");
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        return new Session() {
            private FileLock lock;

            @Override
            public void acquire() throws Exception {
                lock = channel.lock();
            }

            @Override
            public void release() throws Exception {
                lock.release();
            }

            @Override
            public boolean tryRound(int key) throws Exception {
                FileLock held;
                try {
                    held = channel.tryLock(key, 1, false);
                } catch (OverlappingFileLockException e) {
                    return false;
                }
                if (held == null) return false;
                held.release();
                return true;
            }

            @Override
            public void close() throws Exception {
                channel.close();
                Files.deleteIfExists(file);
            }
        };
    }

    /** {@code file:///abs/dir} → {@code /abs/dir}; {@code file://rel/dir} → {@code rel/dir}. */
    static Path directory(LockUri uri) {
        String host = uri.host();
        return Path.of(host.isEmpty() || host.equals("localhost") ? uri.path() : host + uri.path());
    }
}
