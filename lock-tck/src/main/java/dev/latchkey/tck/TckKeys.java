package dev.latchkey.tck;

import dev.latchkey.LockKeys;
import dev.latchkey.spi.LockNames;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Keys that break naive backends. {@link #hostile} are all <em>valid</em> and pairwise distinct, so
 * a correct backend locks each independently and returns it unchanged from {@code inspect}: they
 * cover SQL and shell metacharacters, path traversal, escaped slashes, the {@link LockNames}
 * escape and hash markers themselves, whitespace, emoji, right-to-left text, combining marks, keys
 * equal up to case or Unicode normalisation, and keys at or near the 512-byte limit.
 * {@link #invalid} all break the key rules and must be refused before any I/O.
 */
public final class TckKeys {
    private TckKeys() {}

    /**
     * At least 50 valid, distinct hostile keys, each containing {@code tag} so that runs and tests
     * sharing one backing store do not collide. {@code tag} must be short ASCII (up to 40 bytes).
     */
    public static List<String> hostile(String tag) {
        if (tag.length() > 40 || !StandardCharsets.US_ASCII.newEncoder().canEncode(tag)) {
            throw new IllegalArgumentException("tag must be at most 40 ASCII characters");
        }
        List<String> k = new ArrayList<>();
        // SQL, LIKE and glob metacharacters
        k.add(tag + "'; DROP TABLE locks; --");
        k.add(tag + "\" OR \"1\"=\"1");
        k.add(tag + "%");
        k.add(tag + "_");
        k.add(tag + "*?[]{}^$.+()|");
        k.add(tag + "\\'\\\"\\\\");
        // shell
        k.add(tag + "$(touch /tmp/latchkey-pwned)`id`${HOME}");
        k.add(tag + " ;|&><!#~");
        // paths and escapes
        k.add("../" + tag + "/../../etc/passwd");
        k.add("/" + tag);
        k.add(tag + "/");
        k.add(tag + "/a//b/./c");
        k.add(tag + ".");
        k.add(tag + "..");
        k.add(tag + ".lock");
        k.add(tag + "%2F");
        k.add(tag + "%252F");
        k.add(tag + "\\..\\windows\\system32");
        k.add(tag + "~2F");                        // looks like LockNames' escape of '/'
        k.add(tag + "~~" + "0".repeat(64));         // looks like LockNames' hash marker
        k.add(LockNames.encode(tag + "/x"));        // the encoded name of another key, as a key
        k.add(tag + "/x");
        // structured-text injection
        k.add(tag + "{\"key\":\"v\",\"owner\":\"evil\"}");
        k.add(tag + "<a href='x'>&amp;</a>");
        k.add(tag + "key=value\\nowner=evil\\r\\n");
        // whitespace and invisible characters
        k.add(" " + tag + " ");
        k.add(tag + "\u00a0\u2003\u3000");          // no-break, em and ideographic spaces
        k.add(tag + "\u2028\u2029");                // line and paragraph separators
        k.add(tag + "\u200b\u200d\ufeff");          // zero-width space, joiner, BOM
        // emoji, scripts, direction
        k.add(tag + "\uD83D\uDD12\uD83D\uDC68\u200D\uD83D\uDC69\u200D\uD83D\uDC67");  // lock, family (ZWJ)
        k.add(tag + "\u05de\u05e4\u05ea\u05d7");    // Hebrew
        k.add(tag + "\u0645\u0641\u062a\u0627\u062d \u0627\u0644\u0642\u0641\u0644"); // Arabic
        k.add(tag + "\u202eevil\u202c");            // right-to-left override
        k.add(tag + "\u9501\u94a5\u5319");          // CJK
        k.add(tag + "Z\u0351\u0334a\u0338\u0322l\u0336go");  // combining marks
        // equal up to case
        k.add(tag + "Job");
        k.add(tag + "job");
        k.add(tag + "JOB");
        k.add(tag + "stra\u00dfe");
        k.add(tag + "strasse");
        k.add(tag + "\u0130\u0131");               // Turkish dotted capital I, dotless i
        k.add(tag + "ii");
        k.add(tag + "\uff46\uff55\uff4c\uff4c");    // fullwidth "full"
        k.add(tag + "full");
        // equal up to Unicode normalisation
        k.add(tag + "caf\u00e9");                   // NFC
        k.add(tag + "cafe\u0301");                  // NFD
        k.add(tag + "\u212b");                      // ANGSTROM SIGN
        k.add(tag + "\u00c5");                      // A WITH RING ABOVE (NFC)
        k.add(tag + "A\u030a");                     // A + COMBINING RING (NFD)
        // at and near the 512-byte limit
        k.add(padAscii(tag + "-max-", LockKeys.MAX_BYTES, 'x'));
        k.add(padAscii(tag + "-max-", LockKeys.MAX_BYTES - 4, 'y') + "\uD83D\uDD12"); // ends in a 4-byte char
        k.add(fillMultiByte(tag + "-euro-", "\u20ac"));                               // 3-byte chars up to the limit
        k.add(fillMultiByte(tag + "-e-", "\u00e9"));                                  // 2-byte chars up to the limit
        // long keys that share a long head: a hashed name must keep them apart
        String head = padAscii(tag + "-long-", 400, 'h');
        k.add(head + "-tail-a");
        k.add(head + "-tail-b");
        k.add(padAscii(tag + "-mid-", 200, 'm') + "A" + "z".repeat(250));
        k.add(padAscii(tag + "-mid-", 200, 'm') + "B" + "z".repeat(250));

        Set<String> distinct = new LinkedHashSet<>(k);
        if (distinct.size() != k.size()) throw new IllegalStateException("hostile keys are not distinct");
        k.forEach(LockKeys::validate);
        return List.copyOf(k);
    }

    /**
     * Keys every backend must refuse with {@code InvalidLockKeyException}: null, empty, NUL, C0 and
     * C1 control characters, lone surrogates, 513 bytes (ASCII and multi-byte). Contains one null.
     */
    public static List<String> invalid() {
        return Arrays.asList(
                null,
                "",
                "\u0000",
                "a\u0000b",
                "tab\tkey",
                "line\nbreak",
                "cr\r",
                "\u001b[31mred",
                "del\u007f",
                "nel\u0085",
                "lone\uD800surrogate",
                "\uDC00low",
                "x".repeat(LockKeys.MAX_BYTES + 1),
                "\u20ac".repeat(171));   // 513 bytes in 3-byte characters
    }

    /** {@code prefix} padded with {@code pad} to exactly {@code bytes} UTF-8 bytes. */
    static String padAscii(String prefix, int bytes, char pad) {
        int have = prefix.getBytes(StandardCharsets.UTF_8).length;
        if (have > bytes) throw new IllegalArgumentException("prefix too long");
        return prefix + String.valueOf(pad).repeat(bytes - have);
    }

    /** {@code prefix} followed by as many {@code ch} as fit in the byte limit (within a few bytes of it). */
    private static String fillMultiByte(String prefix, String ch) {
        int room = LockKeys.MAX_BYTES - prefix.getBytes(StandardCharsets.UTF_8).length;
        return prefix + ch.repeat(room / ch.getBytes(StandardCharsets.UTF_8).length);
    }
}
