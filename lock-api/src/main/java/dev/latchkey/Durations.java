package dev.latchkey;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Human durations as used in URIs and on the command line: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}. */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h)?");

    private Durations() {}

    /**
     * Parses {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}; a bare number means seconds.
     *
     * @throws IllegalArgumentException naming the accepted forms
     */
    public static Duration parse(String text) {
        Matcher m = FORM.matcher(text == null ? "" : text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "not a duration: '" + text + "' (use e.g. 500ms, 30s, 5m, 1h)");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        switch (unit) {
            case "ms": return Duration.ofMillis(n);
            case "s": return Duration.ofSeconds(n);
            case "m": return Duration.ofMinutes(n);
            default: return Duration.ofHours(n);
        }
    }

    /** The shortest exact form: {@code 1500ms}, {@code 30s}, {@code 5m}. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0 && ms > 0) return ms / 3_600_000 + "h";
        if (ms % 60_000 == 0 && ms > 0) return ms / 60_000 + "m";
        if (ms % 1000 == 0) return ms / 1000 + "s";
        return ms + "ms";
    }
}
