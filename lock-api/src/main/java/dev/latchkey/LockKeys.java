package dev.latchkey;

import java.nio.charset.StandardCharsets;

/**
 * The key rules, checked before any I/O: 1..512 bytes of UTF-8, no NUL or other control
 * characters, well-formed Unicode (no lone surrogates). Everything else is allowed — slashes,
 * quotes, {@code ..}, emoji, right-to-left text — and backends must store it safely. Keys are
 * compared exactly: no case folding, no Unicode normalisation.
 */
public final class LockKeys {
    public static final int MAX_BYTES = 512;

    private LockKeys() {}

    /** Returns {@code key} if valid, else throws {@link InvalidLockKeyException} saying why. */
    public static String validate(String key) {
        if (key == null) throw new InvalidLockKeyException("lock key must not be null");
        if (key.isEmpty()) throw new InvalidLockKeyException("lock key must not be empty");
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (Character.isISOControl(c)) {
                throw new InvalidLockKeyException(String.format(
                        "lock key must not contain control characters (U+%04X at index %d)", (int) c, i));
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new InvalidLockKeyException("lock key has a lone surrogate at index " + i);
            }
            if (Character.isLowSurrogate(c)) {
                throw new InvalidLockKeyException("lock key has a lone surrogate at index " + i);
            }
        }
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_BYTES) {
            throw new InvalidLockKeyException("lock key is " + bytes + " UTF-8 bytes; the limit is " + MAX_BYTES);
        }
        return key;
    }
}
