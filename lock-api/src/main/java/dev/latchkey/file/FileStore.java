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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ConditionalStore} in a local directory, with {@link HolderLiveness} from OS file locks.
 *
 * <p><b>Compare-and-swap.</b> Each name has a record file {@code NAME.lease} (a version line, then
 * the data), replaced only by writing a temporary file and renaming it atomically, so readers
 * never see a torn record while the machine runs. A write compares the version under a short
 * exclusive OS lock on {@code NAME.cas}, taken after an in-JVM lock (one JVM cannot hold two OS
 * locks on one file), so writers across threads and processes are serialised.
 *
 * <p><b>Crashes.</b> Nothing is synced per write: a process crash loses nothing (the page cache
 * has it all), but an OS crash or power loss may turn a rename back or leave a record empty,
 * zero-filled or cut short. Fencing tokens still never repeat: {@link #nextToken} reserves them
 * durably, a block at a time, and after a reboot starts above every token reserved before
 * ({@link TokenReservation}). A torn record — empty, starting with a zero byte, without a complete
 * version line, or not matching the CRC-32C in its version line ({@link RecordFormat}) — is
 * something no running system shows (see above), so it is read as absent and the key can be taken
 * again. Absent whatever liveness marks the key's {@code .lck} has: the crash that tore it ended
 * every process that held a mark then, so any mark now belongs to a claim made since — among them
 * the claimant's own, which the engine takes before it writes — and a torn record names no token
 * whose mark could be told apart. What this does not cover: a record truncated by something else
 * while its holder lives frees the key, as deleting it by hand always did. A record whose version
 * line carries no CRC (written before records had one, or by another program) is returned as it
 * is, so foreign content stays an error of the engine rather than a silently freed key.
 *
 * <p><b>Holder liveness.</b> The holder of acquisition {@code token} keeps an OS lock on byte
 * {@code token} of {@code NAME.lck} for the life of its lease; the kernel drops it when the process
 * dies, so a contender that can lock that byte knows the holder is gone and may take over at once.
 *
 * <p><b>Interrupts.</b> An interrupt inside a blocking {@code lock}, {@code read}, {@code write}
 * or {@code force} closes the channel, and closing any channel of a file drops every OS lock the
 * JVM holds on it — live holders would look dead. So all I/O on {@code NAME.lck} and on
 * {@code .tokens} runs on private threads that are never interrupted ({@link PrivateThread}).
 * ({@code .lck} needs only {@code tryLock} and {@code release}, which are not interruptible; the
 * thread keeps it safe should that change.) Record reads and writes run on the caller's thread: an
 * interrupt there fails the operation before its rename, and the {@code .cas} lock is only ever
 * held by one thread of the JVM.
 *
 * <p>Meant for a local file system. Network file systems differ in locking, rename and sync
 * semantics; use a server backend across hosts.
 */
public final class FileStore implements ConditionalStore, HolderLiveness {
    private static final PrivateThread MARKS = new PrivateThread("latchkey-file-locks");
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
    private final TokenReservation tokens;

    public FileStore(Path dir) {
        this(dir, Host.THIS_MACHINE);
    }

    /** On {@code host}: a test's stand-in for the machine (boot id, fsync counting, another JVM's state). */
    FileStore(Path dir, Host host) {
        try {
            Files.createDirectories(dir);
            this.dir = dir.toRealPath();
        } catch (IOException e) {
            throw new LockBackendException("cannot create lock directory " + dir + ": " + e.getMessage(), false, e);
        }
        this.tokens = host.reservation(this.dir);
    }

    /** The record, or empty if there is none or it is torn (see the class comment). */
    @Override
    public Optional<StoredRecord> read(String name) {
        byte[] all;
        try {
            all = Files.readAllBytes(recordFile(name));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw failure("read", name, e);
        }
        return RecordFormat.decode(all);
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

    /** Reserved durably, a block at a time, shared by every store of this JVM on this directory. */
    @Override
    public long nextToken(long previous) {
        return tokens.next(previous);
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
        String version = RecordFormat.newVersion(data);
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
        return MARKS.call(op, "OS file lock in " + dir);
    }

    private LockBackendException failure(String what, String name, IOException e) {
        return new LockBackendException("cannot " + what + " lock file " + recordFile(name) + ": " + e, true, e);
    }
}
