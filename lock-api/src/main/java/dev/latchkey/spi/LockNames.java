package dev.latchkey.spi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * Turns a lock key into a name safe for an object store, a file system or a URL path: only
 * {@code [a-z0-9_-]} and escapes {@code ~XX} (one per UTF-8 byte, upper-case hex). So a name never
 * holds {@code /}, {@code .}, {@code %} or upper case — nothing escapes a prefix, and keys that differ
 * only in case stay apart even on a case-insensitive file system. Distinct keys give distinct names.
 *
 * <p>Names longer than {@value #MAX_PLAIN} characters keep a readable head and end in
 * {@code ~~<sha-256 of the key>}, keeping them under file-name and object-key limits; those cannot be
 * decoded, so the lease record carries the key itself.
 */
public final class LockNames {
    /** Longest name kept fully reversible. */
    public static final int MAX_PLAIN = 200;
    private static final int HEAD = 130;

    private LockNames() {}

    public static String encode(String key) {
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
                sb.append((char) c);
            } else {
                sb.append('~').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        if (sb.length() <= MAX_PLAIN) return sb.toString();
        int cut = HEAD; // never split a ~XX escape: '~' only ever starts one
        if (sb.charAt(cut - 1) == '~') cut -= 1;
        else if (sb.charAt(cut - 2) == '~') cut -= 2;
        return sb.substring(0, cut) + "~~" + sha256(bytes);
    }

    /** The key of a name made by {@link #encode}, or empty for a hashed (long) name. */
    public static Optional<String> decode(String name) {
        if (name.contains("~~")) return Optional.empty();
        byte[] out = new byte[name.length()];
        int n = 0;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '~') {
                out[n++] = (byte) Integer.parseInt(name.substring(i + 1, i + 3), 16);
                i += 2;
            } else {
                out[n++] = (byte) c;
            }
        }
        return Optional.of(new String(out, 0, n, StandardCharsets.UTF_8));
    }

    /**
     * A name prefix that every name of a key starting with {@code keyPrefix} starts with (used to
     * narrow listings; callers still filter on the key in the record).
     */
    public static String listingPrefix(String keyPrefix) {
        String enc = encode(keyPrefix);
        if (enc.contains("~~")) enc = enc.substring(0, enc.indexOf("~~"));
        return enc.length() > HEAD - 3 ? enc.substring(0, HEAD - 3) : enc;
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
