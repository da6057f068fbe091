package dev.latchkey.file;

import static dev.latchkey.file.Machines.manager;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.LockNames;
import dev.latchkey.spi.StoredRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Interrupts that arrive while {@code file://} works on its OS-locked files ({@code NAME.lck},
 * {@code .tokens}): the interrupted call completes and keeps the thread's interrupt status, and
 * the OS locks other leases of this JVM hold on the same file survive — checked from another
 * process, the only one that can see them.
 *
 * <p>Which operations an interrupt can break: a blocking {@code FileChannel.lock}, {@code read},
 * {@code write}, {@code force} and {@code map} close the channel when the thread is interrupted
 * (the {@code .tokens} update uses the first four); {@code tryLock} and {@code FileLock.release},
 * all that {@code NAME.lck} needs, never block and are not interruptible; records are read and
 * written through a mapping ({@code map} itself runs with the interrupt status set aside).
 */
class FileInterruptTest {
    @TempDir
    Path dir;

    /**
     * A {@link FileConditionalStore} whose calls all run with the caller interrupted, as if an interrupt
     * arrived just as each began; records each call that lost the interrupt status. (Record reads
     * and writes take the compare-and-swap lock on {@code NAME.lck}, the file the marks are on.)
     */
    private static final class InterruptedOnLockedFiles implements ConditionalStore, HolderLiveness {
        final FileConditionalStore inner;
        final List<String> lostInterrupts = new CopyOnWriteArrayList<>();

        InterruptedOnLockedFiles(FileConditionalStore inner) {
            this.inner = inner;
        }

        private <T> T interrupted(String call, Supplier<T> op) {
            Thread.currentThread().interrupt();
            try {
                return op.get();
            } finally {
                if (!Thread.interrupted()) lostInterrupts.add(call); // clears it, so the engine goes on
            }
        }

        @Override public boolean attach(String name, long token) { return interrupted("attach", () -> inner.attach(name, token)); }
        @Override public void detach(String name, long token) { interrupted("detach", () -> { inner.detach(name, token); return null; }); }
        @Override public boolean isAlive(String name, long token) { return interrupted("isAlive", () -> inner.isAlive(name, token)); }
        @Override public long nextToken(long previous) { return interrupted("nextToken", () -> inner.nextToken(previous)); }
        @Override public Optional<StoredRecord> read(String name) { return interrupted("read", () -> inner.read(name)); }
        @Override public Optional<String> create(String name, byte[] data) { return interrupted("create", () -> inner.create(name, data)); }
        @Override public Optional<String> replace(String name, String v, byte[] data) { return interrupted("replace", () -> inner.replace(name, v, data)); }
        @Override public boolean delete(String name, String v) { return interrupted("delete", () -> inner.delete(name, v)); }
        @Override public List<String> list(String prefix) { return inner.list(prefix); }
        @Override public String describe() { return inner.describe(); }
        @Override public void close() {}
    }

    @Test
    void anInterruptedTokenReservationCompletes() throws Exception {
        Host jvm = Machines.jvmOnBoot("boot-1", 1); // every token is a reservation: create, then one block each
        FileConditionalStore store = new FileConditionalStore(dir, jvm);
        for (long previous = 0; previous < 3; previous++) {
            Thread.currentThread().interrupt();
            long token = store.nextToken(previous);
            assertThat(Thread.interrupted()).as("interrupt status kept").isTrue();
            assertThat(token).isEqualTo(previous + 1);
            assertThat(Machines.tokenFile(dir).high()).isEqualTo(token);
        }
        assertThat(jvm.syncs()).isEqualTo(2 + 2);
    }

    @Test
    void interruptsDuringTakeoverAcquireAndReleaseKeepOtherLeasesMarks() throws Exception {
        long deadHolder = Long.parseLong(OtherProcess.run("hold-and-die", dir.toString(), "job"));
        // A lease of this JVM that was lost keeps its mark on the key's file until its TTL has
        // passed (the engine does so on loss); here it is held directly, at a byte no token uses.
        FileConditionalStore plain = new FileConditionalStore(dir);
        long lingering = 1_000_000;
        assertThat(plain.attach(LockNames.encode("job"), lingering)).isTrue();

        InterruptedOnLockedFiles store = new InterruptedOnLockedFiles(new FileConditionalStore(dir));
        try (ConditionalStoreLockManager m = manager(store)) {
            // read, isAlive finds the killed holder gone; nextToken, attach, replace; then release: replace, detach
            Lease l = m.tryAcquire("job").orElseThrow();
            assertThat(l.fencingToken()).isGreaterThan(deadHolder);
            l.release();
            Lease again = m.tryAcquire("job").orElseThrow();
            assertThat(again.fencingToken()).isGreaterThan(l.fencingToken());
            again.release();
        }

        assertThat(store.lostInterrupts).isEmpty();
        Path lck = dir.resolve(LockNames.encode("job") + ".lck");
        assertThat(OtherProcess.run("probe", lck.toString(), Long.toString(lingering))).isEqualTo("held");
        plain.detach(LockNames.encode("job"), lingering);
        assertThat(OtherProcess.run("probe", lck.toString(), Long.toString(lingering))).isEqualTo("free");
    }
}
