package dev.latchkey.file;

import dev.latchkey.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * The bytes of a {@code NAME.lease} file: a version line {@code <random hex>/<CRC-32C of the data,
 * 8 hex>}, then the data. The version is the whole line (opaque to the engine, unique per write).
 *
 * <p>Decoding tells a <em>torn</em> file — what a power loss leaves of a write whose rename or data
 * never reached the disk — from a record: empty, starting with a zero byte (zero-filled), without
 * a complete version line, or with a CRC that does not match the data. A version line without a
 * CRC (records written before it existed, or foreign files) is returned unchecked, so that foreign
 * content still reaches the engine and is reported there instead of being taken for a torn record.
 */
final class RecordFormat {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private static final int CRC_DIGITS = 8;

    private RecordFormat() {}

    /** A fresh version line (without the newline) for a write of {@code data}. */
    static String newVersion(byte[] data) {
        StringBuilder sb = new StringBuilder(16 + 1 + CRC_DIGITS)
                .append(Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L)).append('/');
        long crc = crc(data, 0, data.length);
        for (int shift = 4 * (CRC_DIGITS - 1); shift >= 0; shift -= 4) sb.append(HEX[(int) (crc >>> shift) & 0xf]);
        return sb.toString();
    }

    /** The record in {@code file}, or empty if it is torn. */
    static Optional<StoredRecord> decode(byte[] file) {
        if (file.length == 0 || file[0] == 0) return Optional.empty();
        int nl = indexOf(file, (byte) '\n');
        if (nl < 0) return Optional.empty();
        String version = new String(file, 0, nl, StandardCharsets.US_ASCII);
        int slash = version.indexOf('/');
        boolean ours = slash >= 1 && slash <= 16 && version.length() - slash - 1 == CRC_DIGITS
                && isHex(version, 0, slash) && isHex(version, slash + 1, version.length());
        if (ours && Long.parseLong(version, slash + 1, version.length(), 16) != crc(file, nl + 1, file.length - nl - 1)) {
            return Optional.empty();
        }
        return Optional.of(new StoredRecord(Arrays.copyOfRange(file, nl + 1, file.length), version, null));
    }

    private static long crc(byte[] b, int off, int len) {
        CRC32C crc = new CRC32C();
        crc.update(b, off, len);
        return crc.getValue();
    }

    private static boolean isHex(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        }
        return true;
    }

    private static int indexOf(byte[] a, byte b) {
        for (int i = 0; i < a.length; i++) if (a[i] == b) return i;
        return -1;
    }
}
