package dev.latchkey.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One record read from a {@link ConditionalStore}.
 *
 * @param data    the bytes last written
 * @param version opaque; changes on every write (an ETag, a generation, a counter)
 * @param age     how long ago this version was written, measured by the store's own clock
 *                (e.g. S3's {@code Date} minus {@code Last-Modified}), rounded so that it never
 *                overstates the true age (a record judged older than it is would be taken over
 *                early); {@code null} when the store
 *                cannot tell, in which case staleness is judged by watching the version unchanged
 *                for a full TTL on the local monotonic clock
 */
public record StoredRecord(byte[] data, String version, Duration age) {
    public StoredRecord {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(version, "version");
    }
}
