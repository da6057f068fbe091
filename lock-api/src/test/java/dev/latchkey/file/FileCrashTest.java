package dev.latchkey.file;

import static dev.latchkey.file.Machines.jvmOnBoot;
import static dev.latchkey.file.Machines.jvmWithoutBootId;
import static dev.latchkey.file.Machines.manager;
import static dev.latchkey.file.Machines.recordFile;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Lease;
import dev.latchkey.LockBackendException;
import dev.latchkey.engine.ConditionalStoreLockManager;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A power loss under {@code file://}, played out: the last writes of a record are lost (an older
 * copy comes back) or the record is left torn, and the machine boots with a new boot id; and a
 * process killed in the middle of a write. Each {@link Host} stands for one JVM on one boot.
 */
class FileCrashTest {
    @TempDir
    Path dir;

    /** Acquires and releases {@code key} {@code times} times; the highest token handed out. */
    private static long handOut(ConditionalStoreLockManager manager, String key, int times) {
        long highest = 0;
        for (int i = 0; i < times; i++) {
            Lease l = manager.tryAcquire(key).orElseThrow();
            highest = Math.max(highest, l.fencingToken());
            l.release();
        }
        return highest;
    }

    @ParameterizedTest(name = "older copy {0}")
    @ValueSource(strings = {"released", "held by a holder the crash killed"})
    void aRecordTurnedBackByAPowerLossNeverGetsATokenHandedOutBefore(String olderCopy) throws IOException {
        Path record = recordFile(dir, "job");
        byte[] older;
        long highest;
        try (ConditionalStoreLockManager before = manager(jvmOnBoot("boot-1"), dir)) {
            Lease first = before.tryAcquire("job").orElseThrow();
            if (olderCopy.equals("released")) first.release();
            older = Files.readAllBytes(record); // what the disk still holds if every later rename is lost
            if (!olderCopy.equals("released")) first.release();
            highest = Math.max(first.fencingToken(), handOut(before, "job", 5));
        }
        Files.write(record, older);

        try (ConditionalStoreLockManager after = manager(jvmOnBoot("boot-2"), dir)) {
            Lease next = after.tryAcquire("job").orElseThrow();
            assertThat(next.fencingToken()).isGreaterThan(highest);
            next.release();
            assertThat(after.tryAcquire("job").orElseThrow().fencingToken()).isEqualTo(next.fencingToken() + 1);
        }
    }

    @Test
    void anotherJvmOnTheSameBootContinuesWithoutAJump() {
        long highest;
        try (ConditionalStoreLockManager first = manager(jvmOnBoot("boot-1"), dir)) {
            highest = handOut(first, "job", 3);
        }
        try (ConditionalStoreLockManager second = manager(jvmOnBoot("boot-1"), dir)) {
            assertThat(second.tryAcquire("job").orElseThrow().fencingToken()).isEqualTo(highest + 1);
        }
    }

    @Test
    void withoutABootIdEveryNewJvmAssumesACrash() throws IOException {
        long highest;
        try (ConditionalStoreLockManager first = manager(jvmWithoutBootId(), dir)) {
            highest = handOut(first, "job", 3);
        }
        long reserved = Machines.tokenFile(dir).high();
        try (ConditionalStoreLockManager second = manager(jvmWithoutBootId(), dir)) {
            long token = second.tryAcquire("job").orElseThrow().fencingToken();
            assertThat(token).isGreaterThan(highest).isEqualTo(reserved + 1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"empty", "zero-filled", "cut short"})
    void aTornRecordIsAbsentAndTheKeyCanBeTakenAgain(String torn) throws IOException {
        Path record = recordFile(dir, "job");
        long highest;
        try (ConditionalStoreLockManager before = manager(jvmOnBoot("boot-1"), dir)) {
            highest = handOut(before, "job", 3);
        }
        byte[] whole = Files.readAllBytes(record);
        Files.write(record, switch (torn) {
            case "empty" -> new byte[0];
            case "zero-filled" -> new byte[whole.length]; // size on disk, data never written
            default -> Arrays.copyOf(whole, 40); // the tail never written: within the first slot's header
        });

        try (ConditionalStoreLockManager after = manager(jvmOnBoot("boot-2"), dir)) {
            assertThat(after.inspect("job")).isEmpty();
            Lease next = after.tryAcquire("job").orElseThrow();
            assertThat(next.fencingToken()).isGreaterThan(highest);
            assertThat(after.inspect("job")).isPresent();
        }
    }

    /**
     * A process killed in the middle of a write leaves the slot it was writing cut short; the
     * record is then the one before the write, and its token counter goes on from there on the
     * same boot (a torn record read as absent would restart the key's tokens at the boot's floor).
     */
    @ParameterizedTest(name = "torn after {0} bytes")
    @ValueSource(ints = {1, 30, 60, Integer.MAX_VALUE}) // the last: all but its final byte
    void aWriteCutShortByAKillLeavesTheRecordBefore(int written) throws IOException {
        Path record = recordFile(dir, "job");
        try (ConditionalStoreLockManager m = manager(jvmOnBoot("boot-1"), dir)) {
            long highest = handOut(m, "job", 3);
            ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(record));
            RecordFormat.Slot a = RecordFormat.decodeSlot(file, 0, 0);
            RecordFormat.Slot b = RecordFormat.decodeSlot(file, RecordFormat.SLOT_SPAN, 1);
            assertThat(a).isNotNull();
            assertThat(b).isNotNull();
            RecordFormat.Slot newest = a.gen() > b.gen() ? a : b;
            byte[] next = RecordFormat.encodeSlot(newest.gen() + 1, RecordFormat.newVersion(), "half a record".getBytes(StandardCharsets.UTF_8));
            try (FileChannel ch = FileChannel.open(record, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(next, 0, Math.min(written, next.length - 1)), (long) (1 - newest.index()) * RecordFormat.SLOT_SPAN);
            }

            assertThat(m.inspect("job")).isEmpty(); // the released record, not a torn one
            Lease l = m.tryAcquire("job").orElseThrow();
            assertThat(l.fencingToken()).isEqualTo(highest + 1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"version line without a checksum", "version line with a matching checksum"})
    void foreignContentUnderAValidVersionLineStaysAnError(String line) throws IOException {
        byte[] foreign = "hello from another program\n".getBytes(StandardCharsets.UTF_8);
        CRC32C crc = new CRC32C();
        crc.update(foreign);
        String version = line.startsWith("version line without") ? "0123abcd" : String.format("0123abcd/%08x", crc.getValue());
        Files.write(recordFile(dir, "job"), (version + "\n" + new String(foreign, StandardCharsets.UTF_8))
                .getBytes(StandardCharsets.UTF_8));

        try (ConditionalStoreLockManager m = manager(jvmOnBoot("boot-1"), dir)) {
            assertThatThrownBy(() -> m.tryAcquire("job"))
                    .isInstanceOf(LockBackendException.class).hasMessageContaining("not a latchkey lease record");
        }
    }
}
