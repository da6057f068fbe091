package dev.latchkey.file;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.StoredRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ConditionalStore} in a local directory, with {@link HolderLiveness} from OS file locks.
 *
 * <p><b>Compare-and-swap.</b> Each name has a record file {@code NAME.lease} (a version line, then
 * the data), replaced only by writing a temporary file and renaming it atomically, so readers
 * never see a torn record. A write compares the version under a short exclusive OS lock on
 * {@code NAME.cas}, taken after an in-JVM lock (one JVM cannot hold two OS locks on one file), so
 * writers across threads and processes are serialised.
 *
 * <p><b>Holder liveness.</b> The holder of acquisition {@code token} keeps an OS lock on byte
 * {@code token} of {@code NAME.lck} for the life of its lease; the kernel drops it when the process
 * dies, so a contender that can lock that byte knows the holder is gone and may take over at once.
 * All operations on {@code NAME.lck} run on one private thread that is never interrupted: Java
 * closes a channel — and drops every lock the JVM holds on that file — when a thread is interrupted
 * inside a channel operation, which would make live holders look dead.
 *
 * <p>Meant for a local file system. Network file systems differ in locking and rename semantics;
 * use a server backend across hosts.
 */
public final class FileStore implements ConditionalStore, HolderLiveness {
    private static final ExecutorService MARKS = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "latchkey-file-locks");
        t.setDaemon(true);
        return t;
    });
    /** Open {@code .lck} files of this JVM with the marks held through them; touched only on {@link #MARKS}. */
    private static final Map<Path, MarkFile> MARK_FILES = new HashMap<>();
    private static final ConcurrentHashMap<Path, ReentrantLock> CAS_LOCKS = new ConcurrentHashMap<>();

    private static final class MarkFile {
        final FileChannel channel;
        final Map<Long, FileLock> held = new HashMap<>();

        MarkFile(FileChannel channel) {
            this.channel = channel;
        }
    }

    private final Path dir;

    public FileStore(Path dir) {
        try {
            Files.createDirectories(dir);
            this.dir = dir.toRealPath();
        } catch (IOException e) {
            throw new LockBackendException("cannot create lock directory " + dir + ": " + e.getMessage(), false, e);
        }
    }

    @Override
    public Optional<StoredRecord> read(String name) {
        try {
            byte[] all = Files.readAllBytes(recordFile(name));
            int nl = indexOf(all, (byte) '\n');
            if (nl < 0) throw new LockBackendException("corrupt lock file " + recordFile(name), false);
            String version = new String(all, 0, nl, StandardCharsets.US_ASCII);
            return Optional.of(new StoredRecord(Arrays.copyOfRange(all, nl + 1, all.length), version, null));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw failure("read", name, e);
        }
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        return underCasLock(name, () -> read(name).isPresent() ? Optional.empty() : Optional.of(write(name, data)));
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        return underCasLock(name, () -> {
            Optional<StoredRecord> cur = read(name);
            return cur.isPresent() && cur.get().version().equals(expectedVersion)
                    ? Optional.of(write(name, data)) : Optional.empty();
        });
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        return underCasLock(name, () -> {
            Optional<StoredRecord> cur = read(name);
            if (cur.isEmpty() || !cur.get().version().equals(expectedVersion)) return false;
            Files.delete(recordFile(name));
            return true;
        });
    }

    @Override
    public List<String> list(String prefix) {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, prefix + "*.lease")) {
            for (Path p : files) {
                String f = p.getFileName().toString();
                out.add(f.substring(0, f.length() - ".lease".length()));
            }
        } catch (IOException e) {
            throw new LockBackendException("cannot list " + dir + ": " + e.getMessage(), true, e);
        }
        return out;
    }

    @Override
    public boolean attach(String name, long token) {
        Path lck = markFile(name);
        return onMarksThread(() -> {
            MarkFile mf = openMarks(lck);
            if (mf.held.containsKey(token)) return false;
            FileLock lock = mf.channel.tryLock(token, 1, false);
            if (lock == null) {
                closeIfUnused(lck, mf);
                return false;
            }
            mf.held.put(token, lock);
            return true;
        });
    }

    @Override
    public void detach(String name, long token) {
        Path lck = markFile(name);
        onMarksThread(() -> {
            MarkFile mf = MARK_FILES.get(lck);
            if (mf == null) return null;
            FileLock lock = mf.held.remove(token);
            if (lock != null) lock.release();
            closeIfUnused(lck, mf);
            return null;
        });
    }

    @Override
    public boolean isAlive(String name, long token) {
        Path lck = markFile(name);
        return onMarksThread(() -> {
            MarkFile mf = openMarks(lck);
            if (mf.held.containsKey(token)) return true;
            FileLock probe = mf.channel.tryLock(token, 1, false);
            if (probe == null) return true; // another process holds the mark: it is alive
            probe.release();
            closeIfUnused(lck, mf);
            return false;
        });
    }

    @Override
    public String describe() {
        return "file://" + dir;
    }

    /** Locks held by leases outlive a closed manager object until the leases end; nothing to close here. */
    @Override
    public void close() {}

    private Path recordFile(String name) {
        return dir.resolve(name + ".lease");
    }

    private Path markFile(String name) {
        return dir.resolve(name + ".lck");
    }

    private String write(String name, byte[] data) throws IOException {
        String version = Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L);
        Path tmp = dir.resolve(name + ".lease." + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
        byte[] head = (version + "\n").getBytes(StandardCharsets.US_ASCII);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ch.write(new ByteBuffer[] {ByteBuffer.wrap(head), ByteBuffer.wrap(data)});
            }
            try {
                Files.move(tmp, recordFile(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new LockBackendException("file system of " + dir + " cannot rename atomically; use a local disk", false, e);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return version;
    }

    private interface IoBody<T> {
        T run() throws IOException;
    }

    private <T> T underCasLock(String name, IoBody<T> body) {
        Path cas = dir.resolve(name + ".cas");
        ReentrantLock jvm = CAS_LOCKS.computeIfAbsent(cas, p -> new ReentrantLock());
        jvm.lock();
        try (FileChannel ch = FileChannel.open(cas, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock ignored = ch.lock()) {
            return body.run();
        } catch (IOException e) {
            throw failure("write", name, e);
        } finally {
            jvm.unlock();
        }
    }

    private static MarkFile openMarks(Path lck) throws IOException {
        MarkFile mf = MARK_FILES.get(lck);
        if (mf == null) {
            mf = new MarkFile(FileChannel.open(lck, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE));
            MARK_FILES.put(lck, mf);
        }
        return mf;
    }

    /** Closing the channel drops every lock the JVM holds on the file, so only when none is held. */
    private static void closeIfUnused(Path lck, MarkFile mf) throws IOException {
        if (mf.held.isEmpty()) {
            MARK_FILES.remove(lck);
            mf.channel.close();
        }
    }

    private <T> T onMarksThread(Callable<T> op) {
        Future<T> f = MARKS.submit(op);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the OS-lock operation is quick and must finish either way
                }
            }
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw new LockBackendException("OS file lock in " + dir + " failed: " + c, true, c);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    private LockBackendException failure(String what, String name, IOException e) {
        return new LockBackendException("cannot " + what + " lock file " + recordFile(name) + ": " + e, true, e);
    }

    private static int indexOf(byte[] a, byte b) {
        for (int i = 0; i < a.length; i++) if (a[i] == b) return i;
        return -1;
    }
}
