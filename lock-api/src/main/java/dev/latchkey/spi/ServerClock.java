package dev.latchkey.spi;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * The age of a stored version from two readings of the <em>store's</em> clock — its "now" (an HTTP
 * {@code Date} header) and the time the version was written ({@code Last-Modified}, an update
 * time) — for {@link StoredRecord#age()}. Rounded so it never overstates: a record judged older than
 * it is would be taken over early.
 */
public final class ServerClock {
    private ServerClock() {}

    /**
     * @param serverNow           the store's current time, truncated to whole seconds as HTTP dates are
     * @param writtenAt           when the version was written, by the same clock
     * @param writtenAtResolution how coarsely {@code writtenAt} is truncated ({@code Last-Modified}:
     *                            one second; a millisecond timestamp: {@link Duration#ZERO})
     * @return the age, never negative; null if either reading is missing
     */
    public static Duration age(Instant serverNow, Instant writtenAt, Duration writtenAtResolution) {
        if (serverNow == null || writtenAt == null) return null;
        Duration age = Duration.between(writtenAt, serverNow).minus(writtenAtResolution);
        return age.isNegative() ? Duration.ZERO : age;
    }

    /** An RFC 1123 HTTP date ({@code Date}, {@code Last-Modified}); null if absent or malformed. */
    public static Instant httpDate(String header) {
        if (header == null) return null;
        try {
            return ZonedDateTime.parse(header.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
