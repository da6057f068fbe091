package dev.latchkey;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as read everywhere the project reads one — URI parameters and the command's flags:
 * the short forms {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 2d}, and ISO-8601
 * ({@code PT30S}, {@code PT0.5S}, {@code P1D}: what {@link Duration#toString()}, {@link Duration#parse}
 * and Spring write).
 */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)?");
    private static final String FORMS = "use e.g. 500ms, 30s, 5m, 1h, 2d, or ISO-8601 such as PT30S";

    private Durations() {}

    /**
     * Parses {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 1d} (a bare number means
     * seconds) or an ISO-8601 duration ({@code PT30S}, case-insensitive). Negative durations are refused.
     *
     * @throws IllegalArgumentException naming the accepted forms
     */
    public static Duration parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith("p")) return parseIso(text, t.toUpperCase(Locale.ROOT));
        Matcher m = FORM.matcher(t);
        if (!m.matches()) throw new IllegalArgumentException("not a duration: '" + text + "' (" + FORMS + ")");
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        switch (unit) {
            case "ms": return Duration.ofMillis(n);
            case "s": return Duration.ofSeconds(n);
            case "m": return Duration.ofMinutes(n);
            case "h": return Duration.ofHours(n);
            default: return Duration.ofDays(n);
        }
    }

    private static Duration parseIso(String text, String iso) {
        Duration d;
        try {
            d = Duration.parse(iso);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not a duration: '" + text + "' (" + FORMS + ")", e);
        }
        if (d.isNegative()) throw new IllegalArgumentException("a duration must not be negative: '" + text + "'");
        return d;
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
