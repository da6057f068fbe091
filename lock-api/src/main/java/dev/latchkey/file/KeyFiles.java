package dev.latchkey.file;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The open files of one key in this JVM — {@code NAME.lck} and {@code NAME.lease} — kept open
 * between operations, one instance per key and JVM, used only under its {@link #lock}.
 *
 * <p><b>Why one instance per JVM, and why nothing here is interruptible.</b> POSIX drops every OS
 * lock a process holds on a file when <em>any</em> descriptor of that file is closed, and Java
 * closes a {@link FileChannel} when a thread is interrupted inside its blocking {@code lock},
 * {@code read}, {@code write} or {@code force}. So {@code NAME.lck}, which carries the holders'
 * liveness marks and the compare-and-swap lock, is opened once per JVM and only {@code tryLock}
 * and {@code release} are ever called on it (neither blocks nor is interruptible); it is closed
 * only when no mark is held through it. The record is read and written through a memory mapping
 * of {@code NAME.lease} (plain memory access, which knows no interrupts); its identity and size
 * are checked before each use, because touching a mapped page past the end of a file truncated by
 * something else faults (a truncation between that check and the access is the one window left).
 *
 * <p><b>Locks on {@code NAME.lck}.</b> Byte {@code t} is the liveness mark of acquisition
 * {@code t}; byte {@link #CAS_BYTE}, above every token, is held for the length of one
 * compare-and-swap. The JVM cannot hold two overlapping locks of one file, and the in-JVM
 * {@link #lock} comes first, so threads of this JVM never race for either.
 */
final class KeyFiles {
    /** The compare-and-swap lock's byte in {@code NAME.lck}: above any token (tokens stay far below 2^62). */
    static final long CAS_BYTE = Long.MAX_VALUE - 1;
    /** Keys kept open in the JVM while they hold no mark; past this, the least recently used idle key is closed. */
    private static final int MAX_IDLE_OPEN = 256;
    private static final long MAX_CAS_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final ConcurrentHashMap<Path, KeyFiles> OPEN = new ConcurrentHashMap<>();
    /** The open keys that held no mark when last unlocked, least recently used first; guarded by {@link #IDLE_LOCK}. */
    private static final LinkedHashMap<KeyFiles, Boolean> IDLE = new LinkedHashMap<>(16, 0.75f, true);
    private static final ReentrantLock IDLE_LOCK = new ReentrantLock();

    final ReentrantLock lock = new ReentrantLock();
    private final Path lckPath;
    private final Path leasePath;
    /** Marks held through {@link #lck}, by token. */
    final Map<Long, FileLock> marks = new HashMap<>();
    private FileChannel lck;
    private MappedByteBuffer leaseMap;
    /** The identity (device and inode) of the mapped file. */
    private Object leaseKey;
    private boolean closed;

    private KeyFiles(Path lckPath, Path leasePath) {
        this.lckPath = lckPath;
        this.leasePath = leasePath;
    }

    /** The files of the key whose {@code .lck} is {@code lckPath}, locked by this thread; {@link #unlock} after. */
    static KeyFiles locked(Path lckPath, Path leasePath) {
        while (true) {
            KeyFiles k = OPEN.computeIfAbsent(lckPath, p -> new KeyFiles(p, leasePath));
            k.lock.lock();
            if (!k.closed) return k;
            k.lock.unlock(); // closed while we waited: a fresh instance is (or will be) in the map
        }
    }

    /**
     * Unlocks; past {@value #MAX_IDLE_OPEN} idle keys, closes the least recently used ones. Never this
     * key, the one in use: closing it would make a process that once touched many keys reopen and
     * map a busy key's files on every call. An idle key another thread is using at that moment is left
     * for a later pass ({@code tryLock}: this never waits for another key while holding its own).
     */
    void unlock() {
        try {
            IDLE_LOCK.lock();
            try {
                if (marks.isEmpty()) IDLE.put(this, Boolean.TRUE); // also moves it to most recently used
                else IDLE.remove(this);
                Iterator<KeyFiles> oldest = IDLE.keySet().iterator();
                while (IDLE.size() > MAX_IDLE_OPEN && oldest.hasNext()) {
                    KeyFiles k = oldest.next();
                    if (k == this || !k.lock.tryLock()) continue;
                    try {
                        oldest.remove();
                        if (!k.closed && k.marks.isEmpty()) k.close(); // one with a mark now returns at its unlock
                    } finally {
                        k.lock.unlock();
                    }
                }
            } finally {
                IDLE_LOCK.unlock();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The {@code NAME.lck} paths of the keys whose files are open in this JVM now (for tests). */
    static Set<Path> openNow() {
        return Set.copyOf(OPEN.keySet());
    }

    /** {@code NAME.lck}, opened (and created) on first use. */
    FileChannel lck() throws IOException {
        if (lck == null) {
            lck = FileChannel.open(lckPath, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        return lck;
    }

    /** Whether {@code NAME.lease} exists. */
    boolean leaseExists() {
        return Files.exists(leasePath);
    }

    /**
     * {@code NAME.lease}, mapped into memory and at least two slots long (extended with zeros if
     * it is shorter: new, of an earlier version, or truncated by something else), created if
     * absent; call it under the compare-and-swap lock. Mapped writes are ordinary page-cache
     * writes: other processes see them at once, and they outlive this process. Each call checks
     * by path that the mapped file is still the one named {@code NAME.lease} (one {@code stat}):
     * if it was deleted or replaced, the file now there is mapped instead. The descriptor is
     * closed once mapped, so a held key costs one open file, {@code NAME.lck}.
     */
    ByteBuffer lease() throws IOException {
        BasicFileAttributes now = attributes();
        if (leaseMap == null || now == null || !now.fileKey().equals(leaseKey)) {
            leaseMap = null; // a deleted or replaced file: the old mapping goes when it is collected
            mapLease();
        } else if (now.size() < RecordFormat.FILE_LENGTH) {
            try (RandomAccessFile f = new RandomAccessFile(leasePath.toFile(), "rw")) {
                extend(f);
            }
        }
        return leaseMap;
    }

    private void mapLease() throws IOException {
        while (true) {
            BasicFileAttributes before = attributes();
            try (RandomAccessFile f = new RandomAccessFile(leasePath.toFile(), "rw")) {
                BasicFileAttributes after = attributes();
                if (after == null || (before != null && !before.fileKey().equals(after.fileKey()))) continue; // replaced meanwhile
                if (after.size() < RecordFormat.FILE_LENGTH) extend(f);
                leaseMap = map(f);
                leaseKey = after.fileKey();
                return;
            }
        }
    }

    /**
     * Extends the file to {@link RecordFormat#FILE_LENGTH} by writing zeros, so its blocks are
     * allocated now: a file extended with {@code setLength} is sparse, and on a full file system
     * touching its mapped page later faults (a JVM {@link InternalError}, in compiled code at some
     * later instruction) instead of failing here with "No space left on device". Writing the slots
     * with {@code write(2)} instead of through the mapping is not enough: on tmpfs (where
     * {@code XDG_RUNTIME_DIR} and often {@code /tmp} live) even a mapped read of a hole needs a
     * page. {@link RandomAccessFile#write} is not interruptible.
     */
    private void extend(RandomAccessFile f) throws IOException {
        long size = f.length();
        try {
            f.seek(size);
            f.write(new byte[(int) (RecordFormat.FILE_LENGTH - size)]);
        } catch (IOException e) {
            f.setLength(size); // no half-extended record file
            throw new IOException("could not extend " + leasePath + " to " + RecordFormat.FILE_LENGTH + " bytes ("
                    + e.getMessage() + "): free space on its file system, then try again", e);
        }
    }

    /** {@code map} is interruptible: run it with the interrupt status set aside, and put it back after. */
    private static MappedByteBuffer map(RandomAccessFile f) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            return f.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, RecordFormat.FILE_LENGTH);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    private BasicFileAttributes attributes() throws IOException {
        try {
            return Files.readAttributes(leasePath, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Takes the compare-and-swap lock on {@code NAME.lck}. Another process holds it for a few
     * microseconds at a time, so this polls {@code tryLock} with a short backoff rather than block
     * in {@code lock} (which an interrupt would break); an interrupt meanwhile is kept for the caller.
     */
    FileLock lockCas() throws IOException {
        FileChannel ch = lck();
        long pause = 10_000;
        boolean interrupted = false;
        try {
            while (true) {
                FileLock l = ch.tryLock(CAS_BYTE, 1, false);
                if (l != null) return l;
                LockSupport.parkNanos(pause);
                if (Thread.interrupted()) interrupted = true;
                pause = Math.min(pause * 2, MAX_CAS_PAUSE_NANOS);
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /** Closing {@link #lck} would drop every mark of this JVM on it, so only when none is held. */
    private void close() {
        closed = true;
        OPEN.remove(lckPath, this);
        try {
            if (lck != null) lck.close();
        } catch (IOException e) {
            // nothing was held through it; the descriptor is gone either way (the mapping goes when collected)
        }
    }
}
