package dev.latchkey.file;

import dev.latchkey.spi.StoredRecord;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * The bytes of a {@code NAME.lease} file: two slots, at offset 0 and at {@link #SLOT_SPAN}, each
 * one write of the record — a header line
 * <pre>latchkey-record 1 gen=7 version=&lt;16 hex&gt; len=&lt;data bytes, or -1 once deleted&gt; crc32c=&lt;8 hex&gt;</pre>
 * then the data. The record is the valid slot with the higher {@code gen}; a write goes to the
 * other slot, so it never touches the state it replaces.
 *
 * <p><b>Torn slots.</b> A slot is valid only if its header is complete and the CRC-32C (over the
 * header's fields and the data) matches: a write cut short by a kill, or a power loss that left a
 * slot empty, zero-filled or half written, makes only that slot invalid, and the other slot holds
 * the state before. A file in which no slot is valid has no record ({@link #decodeLegacy} aside).
 *
 * <p><b>Files of earlier versions</b> (a version line {@code <hex>/<CRC-32C of the data>}, then the
 * data, replaced by rename) are read by {@link #decodeLegacy}: the first slot write goes to slot 1,
 * beyond such a file's content, so a kill during it leaves the old record readable.
 */
final class RecordFormat {
    /** Offset of slot 1, and so the most a slot (header and data) may take. The file is sparse in between. */
    static final int SLOT_SPAN = 65_536;
    /** Length of the file: two slots (sparse where they are not written). */
    static final int FILE_LENGTH = 2 * SLOT_SPAN;
    static final byte[] MAGIC = "latchkey-record 1 ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] GEN = "gen=".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] VERSION = " version=".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LEN = " len=".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CRC_FIELD = " crc32c=".getBytes(StandardCharsets.US_ASCII);
    private static final int CRC_DIGITS = 8;
    private static final int VERSION_DIGITS = 16;
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private RecordFormat() {}

    /**
     * One valid slot, read in place: its data is {@code dataLength} bytes at {@code dataOffset} of
     * the file (-1: the write was a delete).
     */
    record Slot(int index, long gen, String version, int dataOffset, int dataLength) {}

    /** A fresh version: unique per write (64 random bits), never reused for other data. */
    static String newVersion() {
        return hex(ThreadLocalRandom.current().nextLong() | 1L, VERSION_DIGITS);
    }

    /** The bytes of a slot holding {@code data} (null: deleted); null if it would not fit in a slot. */
    static byte[] encodeSlot(long gen, String version, byte[] data) {
        int len = data == null ? -1 : data.length;
        byte[] fields = ("gen=" + gen + " version=" + version + " len=" + len).getBytes(StandardCharsets.US_ASCII);
        CRC32C crc = new CRC32C();
        crc.update(fields);
        if (data != null) crc.update(data);
        int headLength = MAGIC.length + fields.length + CRC_FIELD.length + CRC_DIGITS + 1;
        int total = headLength + Math.max(0, len);
        if (total > SLOT_SPAN) return null;
        byte[] out = new byte[total];
        System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
        System.arraycopy(fields, 0, out, MAGIC.length, fields.length);
        int at = MAGIC.length + fields.length;
        System.arraycopy(CRC_FIELD, 0, out, at, CRC_FIELD.length);
        at += CRC_FIELD.length;
        long c = crc.getValue();
        for (int i = CRC_DIGITS - 1; i >= 0; i--, c >>>= 4) out[at + i] = (byte) HEX[(int) c & 0xf];
        out[at + CRC_DIGITS] = '\n';
        if (data != null) System.arraycopy(data, 0, out, headLength, data.length);
        return out;
    }

    /**
     * The slot at {@code offset} of {@code file} (which is at least {@code offset + SLOT_SPAN}
     * long), or null if it is torn or no slot at all. The header is parsed in the one order
     * {@link #encodeSlot} writes it; anything else is not a valid slot.
     */
    static Slot decodeSlot(ByteBuffer file, int offset, int index) {
        int i = offset;
        for (byte m : MAGIC) if (file.get(i++) != m) return null;
        int fieldsStart = i;
        i = expect(file, i, GEN);
        if (i < 0) return null;
        long gen = 0;
        int digits = 0;
        for (byte b; (b = file.get(i)) >= '0' && b <= '9' && digits < 18; i++, digits++) gen = gen * 10 + (b - '0');
        if (digits == 0 || gen < 1) return null;
        i = expect(file, i, VERSION);
        if (i < 0) return null;
        int versionStart = i;
        for (int end = i + VERSION_DIGITS; i < end; i++) if (Character.digit(file.get(i), 16) < 0) return null;
        int versionEnd = i;
        i = expect(file, i, LEN);
        if (i < 0) return null;
        long len;
        if (file.get(i) == '-') {
            if (file.get(i + 1) != '1') return null;
            len = -1;
            i += 2;
        } else {
            len = 0;
            digits = 0;
            for (byte b; (b = file.get(i)) >= '0' && b <= '9' && digits < 6; i++, digits++) len = len * 10 + (b - '0');
            if (digits == 0) return null;
        }
        int fieldsEnd = i;
        i = expect(file, i, CRC_FIELD);
        if (i < 0) return null;
        long stored = 0;
        for (int end = i + CRC_DIGITS; i < end; i++) {
            int d = Character.digit(file.get(i), 16);
            if (d < 0) return null;
            stored = (stored << 4) | d;
        }
        if (file.get(i++) != '\n') return null;
        int dataOffset = i;
        if (dataOffset - offset + Math.max(0, len) > SLOT_SPAN) return null;
        CRC32C crc = new CRC32C();
        crc.update(file.slice(fieldsStart, fieldsEnd - fieldsStart));
        if (len > 0) crc.update(file.slice(dataOffset, (int) len));
        if (crc.getValue() != stored) return null;
        byte[] version = new byte[versionEnd - versionStart];
        file.get(versionStart, version);
        return new Slot(index, gen, new String(version, StandardCharsets.US_ASCII), dataOffset, (int) len);
    }

    /** The index after {@code expected} if the bytes at {@code i} are it, else -1. */
    private static int expect(ByteBuffer file, int i, byte[] expected) {
        for (byte e : expected) if (file.get(i++) != e) return -1;
        return i;
    }

    /**
     * True if the file begins like a slot (torn or not) or with a zero byte (never written), so it
     * is not a file of an earlier version.
     */
    static boolean startsLikeSlot(ByteBuffer file) {
        if (file.get(0) == 0) return true;
        for (int i = 0; i < MAGIC.length && file.get(i) != 0; i++) if (file.get(i) != MAGIC[i]) return false;
        return true;
    }

    /**
     * A file of an earlier version, or empty if it is torn: empty, starting with a zero byte,
     * without a complete version line, or with a CRC that does not match the data. A version line
     * without a CRC (foreign content) is returned unchecked, so the engine reports it instead of
     * it being taken for a torn record.
     */
    static Optional<StoredRecord> decodeLegacy(byte[] file, int length) {
        if (length == 0 || file[0] == 0) return Optional.empty();
        int nl = indexOf(file, length, (byte) '\n');
        if (nl < 0) return Optional.empty();
        String version = new String(file, 0, nl, StandardCharsets.US_ASCII);
        int slash = version.indexOf('/');
        boolean ours = slash >= 1 && slash <= 16 && version.length() - slash - 1 == CRC_DIGITS
                && isHex(version, 0, slash) && isHex(version, slash + 1, version.length());
        if (ours) {
            CRC32C crc = new CRC32C();
            crc.update(file, nl + 1, length - nl - 1);
            if (Long.parseLong(version, slash + 1, version.length(), 16) != crc.getValue()) return Optional.empty();
        }
        return Optional.of(new StoredRecord(Arrays.copyOfRange(file, nl + 1, length), version, null));
    }

    private static String hex(long value, int digits) {
        char[] out = new char[digits];
        for (int i = digits - 1; i >= 0; i--, value >>>= 4) out[i] = HEX[(int) value & 0xf];
        return new String(out);
    }

    private static boolean isHex(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        }
        return true;
    }

    private static int indexOf(byte[] a, int end, byte b) {
        for (int i = 0; i < end; i++) if (a[i] == b) return i;
        return -1;
    }
}
