package dev.latchkey.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The format of {@code DIR/.tokens}: two slots of 4 KiB, each one line of text
 * <pre>latchkey-tokens 1 seq=7 high=131072 floor=65537 boot=&lt;boot id or none&gt; crc32c=&lt;8 hex&gt;</pre>
 * padded with spaces. The state is the valid slot with the highest {@code seq}; an update
 * overwrites the other slot in place.
 *
 * <p><b>Why it survives a torn write.</b> A write touches one slot only, and the slots lie in
 * different 4 KiB blocks, so a power loss in the middle of a write can spoil (or leave old) only
 * the slot being written; the CRC tells, and the other slot still holds the state before, which
 * was durable before the write began. A file with no valid slot was never completely written.
 */
final class TokenFile {
    static final int SLOT = 4096;
    private static final String MAGIC = "latchkey-tokens 1 ";
    private static final String CRC = " crc32c=";
    private static final String NO_BOOT = "none";

    private TokenFile() {}

    /**
     * One state of the file.
     *
     * @param seq   which write this is; the higher of two valid slots wins
     * @param high  every token handed out on the directory is at most this
     * @param floor every token handed out since boot {@code boot} is at least this
     * @param boot  the boot id of the machine when this was written; null if the OS gave none
     */
    record State(long seq, long high, long floor, String boot) {}

    /** What is on disk: the newest valid state (null if none) and the slot it is in. */
    record OnDisk(State state, int slot) {}

    static OnDisk read(FileChannel ch) throws IOException {
        State best = null;
        int bestSlot = -1;
        for (int slot = 0; slot < 2; slot++) {
            State s = parse(readSlot(ch, slot));
            if (s != null && (best == null || s.seq() > best.seq())) {
                best = s;
                bestSlot = slot;
            }
        }
        return new OnDisk(best, bestSlot);
    }

    /** Writes {@code state} over {@code slot}; the caller makes it durable. */
    static void write(FileChannel ch, int slot, State state) throws IOException {
        writeFully(ch, ByteBuffer.wrap(encode(state)), (long) slot * SLOT);
    }

    /** Writes a whole new file: {@code state} in slot 0, slot 1 blank; the caller makes it durable. */
    static void create(FileChannel ch, State state) throws IOException {
        byte[] all = new byte[2 * SLOT];
        System.arraycopy(encode(state), 0, all, 0, SLOT);
        Arrays.fill(all, SLOT, 2 * SLOT - 1, (byte) ' ');
        all[2 * SLOT - 1] = '\n';
        ch.truncate(0);
        writeFully(ch, ByteBuffer.wrap(all), 0);
    }

    static byte[] encode(State s) {
        String body = MAGIC + "seq=" + s.seq() + " high=" + s.high() + " floor=" + s.floor()
                + " boot=" + (s.boot() == null ? NO_BOOT : s.boot());
        String line = body + CRC + String.format("%08x", crc(body));
        byte[] slot = new byte[SLOT];
        Arrays.fill(slot, (byte) ' ');
        byte[] text = line.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(text, 0, slot, 0, text.length);
        slot[SLOT - 1] = '\n';
        return slot;
    }

    /** The state in one slot's bytes, or null if they are not a complete, intact slot. */
    static State parse(byte[] slot) {
        int end = 0;
        while (end < slot.length && slot[end] != '\n') end++;
        String line = new String(slot, 0, end, StandardCharsets.US_ASCII).stripTrailing();
        int c = line.lastIndexOf(CRC);
        if (!line.startsWith(MAGIC) || c < 0) return null;
        String body = line.substring(0, c);
        try {
            if (Long.parseLong(line.substring(c + CRC.length()), 16) != crc(body)) return null;
            long seq = -1, high = -1, floor = -1;
            String boot = null;
            for (String field : body.substring(MAGIC.length()).split(" ")) {
                int eq = field.indexOf('=');
                String name = field.substring(0, Math.max(eq, 0));
                String value = field.substring(eq + 1);
                switch (name) {
                    case "seq" -> seq = Long.parseLong(value);
                    case "high" -> high = Long.parseLong(value);
                    case "floor" -> floor = Long.parseLong(value);
                    case "boot" -> boot = value.equals(NO_BOOT) ? null : value;
                    default -> { }
                }
            }
            return seq >= 1 && high >= 0 && floor >= 1 ? new State(seq, high, floor, boot) : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static long crc(String body) {
        CRC32C crc = new CRC32C();
        crc.update(body.getBytes(StandardCharsets.US_ASCII));
        return crc.getValue();
    }

    private static byte[] readSlot(FileChannel ch, int slot) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(SLOT);
        long pos = (long) slot * SLOT;
        while (buf.hasRemaining()) {
            int n = ch.read(buf, pos + buf.position());
            if (n < 0) break; // a short file: the rest of the slot was never written
        }
        return Arrays.copyOf(buf.array(), buf.position());
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf, long pos) throws IOException {
        while (buf.hasRemaining()) ch.write(buf, pos + buf.position());
    }
}
