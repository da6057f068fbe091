package dev.latchkey.file;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.StoredRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A {@link ConditionalStore} in a local directory, with {@link HolderLiveness} from OS file locks.
 *
 * <p><b>Compare-and-swap.</b> Each name has a record file {@code NAME.lease} with two slots
 * ({@link RecordFormat}): a write goes, in place, to the slot that does not hold the current
 * record, with a higher generation and a CRC-32C, so it never touches the state it replaces. Reads
 * and writes hold a short exclusive OS lock on a byte of {@code NAME.lck} ({@link KeyFiles#CAS_BYTE}),
 * taken after an in-JVM lock, so writers and readers across threads and processes are serialised
 * and a read never sees a slot half written. Files stay open and the record stays mapped into
 * memory between operations (one set per key and JVM, {@link KeyFiles}): an uncontended operation
 * is an OS lock, a {@code stat} of the record file, a few hundred bytes copied in and out of the
 * page cache, and an unlock — no file created, renamed, opened or closed, no read or write call.
 *
 * <p><b>What survives which crash.</b> Nothing is synced per write.
 * <ul>
 *   <li><em>A process killed</em> at any point (SIGKILL, out of memory) loses nothing that was
 *       written: the page cache has it. A write it was in the middle of can only leave the slot
 *       it was writing invalid (a write of a slot never reaches the other one; a mapped copy cut
 *       short anywhere fails the CRC), so the record is
 *       the one before that write, as if it never began; the kernel drops the dead process's OS
 *       locks, the compare-and-swap lock and its liveness marks with them.</li>
 *   <li><em>An OS crash or power loss</em> may turn a record back to an older write, or leave
 *       both slots torn — empty, zero-filled or cut short, which the CRC tells. Fencing tokens still
 *       never repeat: {@link #nextToken} reserves them durably, a block at a time, and after a
 *       reboot starts above every token reserved before ({@link TokenReservation}). A record with
 *       no valid slot reads as absent and the key can be taken again. Absent whatever liveness
 *       marks the key's {@code .lck} has: the crash that tore it ended every process that held a
 *       mark then, so any mark now belongs to a claim made since — among them the claimant's own,
 *       which the engine takes before it writes — and a torn record names no token whose mark
 *       could be told apart. What this does not cover: a record truncated by something else while
 *       its holder lives frees the key, as deleting it by hand always did.</li>
 * </ul>
 * A file written by earlier versions (a version line, then the data, replaced by rename) is read
 * as such ({@link RecordFormat#decodeLegacy}), so a key's tokens go on across the upgrade; its first
 * write in slots goes beyond its content. Processes of those versions must not share a directory
 * with this one: they replace {@code NAME.lease} by rename and lock {@code NAME.cas}, neither of
 * which this version does. A {@code NAME.lease} deleted or replaced by hand is noticed at the next
 * operation (each checks by path which file it has mapped), so deleting it frees the key as it
 * always did. Deleting {@code NAME.lck} while it is in use was never safe — the marks of live
 * holders stay on the deleted file, so they look dead — and the compare-and-swap lock now stays
 * there too.
 *
 * <p><b>Holder liveness.</b> The holder of acquisition {@code token} keeps an OS lock on byte
 * {@code token} of {@code NAME.lck} for the life of its lease; the kernel drops it when the process
 * dies, so a contender that can lock that byte knows the holder is gone and may take over at once.
 *
 * <p><b>Interrupts.</b> Java closes a channel interrupted inside a blocking {@code lock},
 * {@code read}, {@code write} or {@code force}, and closing any channel of a file drops every OS
 * lock the JVM holds on it — live holders would look dead. On {@code NAME.lck} only
 * {@code tryLock} and {@code release} are called, which are not interruptible; records are read
 * and written through a memory mapping, which knows no interrupts (the {@code map} call itself
 * runs with the interrupt status set aside); {@code .tokens}, which needs all four, is only touched
 * from a private thread that is never interrupted ({@link PrivateThread}). An interrupted
 * caller's operation completes and its interrupt status is kept.
 *
 * <p>Meant for a local file system. Network file systems differ in locking and sync semantics;
 * use a server backend across hosts.
 */
public final class FileConditionalStore implements ConditionalStore, HolderLiveness {
    private final Path dir;
    private final TokenReservation tokens;

    public FileConditionalStore(Path dir) {
        this(dir, Host.THIS_MACHINE);
    }

    /** On {@code host}: a test's stand-in for the machine (boot id, fsync counting, another JVM's state). */
    FileConditionalStore(Path dir, Host host) {
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
        return onKey(name, "read", k -> {
            if (!k.leaseExists()) return Optional.<StoredRecord>empty(); // no .lck is made for a name never written
            try (FileLock ignored = k.lockCas()) {
                return SlotFile.current(k.lease()).record();
            }
        });
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        return underCasLock(name, (file, cur) -> cur.record().isPresent() ? Optional.empty()
                : Optional.of(SlotFile.write(file, cur, data)));
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        return underCasLock(name, (file, cur) -> cur.hasVersion(expectedVersion)
                ? Optional.of(SlotFile.write(file, cur, data)) : Optional.empty());
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        return underCasLock(name, (file, cur) -> {
            if (!cur.hasVersion(expectedVersion)) return false;
            SlotFile.write(file, cur, null); // a deletion is a write too, so the slots' generations go on
            return true;
        });
    }

    /** Reserved durably, a block at a time, shared by every store of this JVM on this directory. */
    @Override
    public long nextToken(long previous) {
        return tokens.next(previous);
    }

    /**
     * Names with a record: a deleted record stays as a file (its slots' generations, and other
     * processes' open mappings of it, must outlive the delete), so each file is read.
     */
    @Override
    public List<String> list(String prefix) {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, prefix + "*.lease")) {
            for (Path p : files) {
                String f = p.getFileName().toString();
                String name = f.substring(0, f.length() - ".lease".length());
                if (read(name).isPresent()) out.add(name);
            }
        } catch (IOException e) {
            throw new LockBackendException("cannot list " + dir + ": " + e.getMessage(), true, e);
        }
        return out;
    }

    @Override
    public boolean attach(String name, long token) {
        return onKey(name, "lock", k -> {
            if (k.marks.containsKey(token)) return false;
            FileLock lock = k.lck().tryLock(token, 1, false);
            if (lock == null) return false;
            k.marks.put(token, lock);
            return true;
        });
    }

    @Override
    public void detach(String name, long token) {
        onKey(name, "unlock", k -> {
            FileLock lock = k.marks.remove(token);
            if (lock != null) lock.release();
            return null;
        });
    }

    @Override
    public boolean isAlive(String name, long token) {
        return onKey(name, "probe", k -> {
            if (k.marks.containsKey(token)) return true;
            FileLock probe = k.lck().tryLock(token, 1, false);
            if (probe == null) return true; // another process holds the mark: it is alive
            probe.release();
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

    private interface KeyOp<T> {
        T run(KeyFiles k) throws IOException;
    }

    private interface CasBody<T> {
        T run(ByteBuffer file, SlotFile.Current current) throws IOException;
    }

    /** Runs {@code op} on the key's open files, with this JVM's other threads on that key kept out. */
    private <T> T onKey(String name, String what, KeyOp<T> op) {
        KeyFiles k = KeyFiles.locked(dir.resolve(name + ".lck"), recordFile(name));
        try {
            return op.run(k);
        } catch (IOException e) {
            throw failure(what, name, e);
        } finally {
            k.unlock();
        }
    }

    /** Runs {@code body} on the current record under the compare-and-swap lock. */
    private <T> T underCasLock(String name, CasBody<T> body) {
        return onKey(name, "write", k -> {
            try (FileLock ignored = k.lockCas()) {
                ByteBuffer file = k.lease();
                return body.run(file, SlotFile.current(file));
            }
        });
    }

    private LockBackendException failure(String what, String name, IOException e) {
        return new LockBackendException("cannot " + what + " lock file " + recordFile(name) + ": " + e, true, e);
    }
}
