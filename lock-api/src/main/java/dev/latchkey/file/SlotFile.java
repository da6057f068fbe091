package dev.latchkey.file;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.StoredRecord;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * Reading and writing the two slots of a {@code NAME.lease} file ({@link RecordFormat}) through
 * its memory mapping ({@link KeyFiles#lease}); the caller holds the key's compare-and-swap lock, so
 * no write runs meanwhile.
 */
final class SlotFile {
    private SlotFile() {}

    /**
     * What the file holds now.
     *
     * @param record  the record (empty: none, deleted, or torn)
     * @param newest  the valid slot with the highest generation, or null if none is valid
     * @param legacy  true if the file is one of an earlier version (its content must not be overwritten first)
     */
    record Current(Optional<StoredRecord> record, RecordFormat.Slot newest, boolean legacy) {
        boolean hasVersion(String version) {
            return record.isPresent() && record.get().version().equals(version);
        }
    }

    static Current current(ByteBuffer file) {
        RecordFormat.Slot a = RecordFormat.decodeSlot(file, 0, 0);
        RecordFormat.Slot b = RecordFormat.decodeSlot(file, RecordFormat.SLOT_SPAN, 1);
        RecordFormat.Slot newest = a == null ? b : b == null || a.gen() > b.gen() ? a : b;
        if (newest != null) {
            Optional<StoredRecord> rec = Optional.empty();
            if (newest.dataLength() >= 0) {
                byte[] data = new byte[newest.dataLength()];
                file.get(newest.dataOffset(), data);
                rec = Optional.of(new StoredRecord(data, newest.version(), null));
            }
            return new Current(rec, newest, false);
        }
        if (!RecordFormat.startsLikeSlot(file)) {
            // a file of an earlier version, extended with zeros to the length of two slots
            byte[] whole = new byte[RecordFormat.SLOT_SPAN];
            file.get(0, whole);
            int end = whole.length;
            while (end > 0 && whole[end - 1] == 0) end--;
            Optional<StoredRecord> rec = RecordFormat.decodeLegacy(whole, end);
            return new Current(rec, null, rec.isPresent());
        }
        return new Current(Optional.empty(), null, false); // a new file, or every slot torn
    }

    /**
     * Writes {@code data} (null: a deletion) into the slot that does not hold the current record;
     * returns the new version.
     */
    static String write(ByteBuffer file, Current cur, byte[] data) {
        String version = RecordFormat.newVersion();
        long gen = cur.newest() == null ? 1 : cur.newest().gen() + 1;
        byte[] slot = RecordFormat.encodeSlot(gen, version, data);
        if (slot == null) {
            throw new LockBackendException("a file:// record holds at most " + RecordFormat.SLOT_SPAN
                    + " bytes; this one has " + data.length + ": store less metadata", false);
        }
        int index = cur.newest() != null ? 1 - cur.newest().index() : cur.legacy() ? 1 : 0;
        file.put(index * RecordFormat.SLOT_SPAN, slot);
        return version;
    }
}
