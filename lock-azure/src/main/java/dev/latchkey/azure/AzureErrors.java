package dev.latchkey.azure;

import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobStorageException;
import dev.latchkey.LockBackendException;
import java.io.IOException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.concurrent.TimeoutException;

/** Turns Azure SDK failures into {@link LockBackendException}s naming the container, never a credential. */
final class AzureErrors {
    /** Resolution of the {@code Date} and {@code Last-Modified} headers. */
    private static final Duration CLOCK_RESOLUTION = Duration.ofSeconds(1);

    private AzureErrors() {}

    static boolean is(BlobStorageException e, BlobErrorCode code) {
        return code.equals(e.getErrorCode());
    }

    /** A 404 that means "no such blob" (not "no such container", which is a configuration error). */
    static boolean blobMissing(BlobStorageException e) {
        return e.getStatusCode() == 404 && !is(e, BlobErrorCode.CONTAINER_NOT_FOUND);
    }

    static LockBackendException failure(String op, String blob, String where, RuntimeException e) {
        if (e instanceof LockBackendException lbe) return lbe;
        boolean retriable;
        String why;
        if (e instanceof BlobStorageException bse) {
            int status = bse.getStatusCode();
            retriable = status >= 500 || status == 408 || status == 429;
            why = "HTTP " + status + (bse.getErrorCode() == null ? "" : " " + bse.getErrorCode());
            if (status == 403) why += " (check the account key or SAS: it needs read, write, delete and list on the container)";
            if (is(bse, BlobErrorCode.CONTAINER_NOT_FOUND)) why += " (create the container first)";
        } else {
            retriable = causedBy(e, IOException.class) || causedBy(e, TimeoutException.class);
            why = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        }
        return new LockBackendException("Azure " + op + " of " + blob + " in " + where + " failed: " + why, retriable, e);
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) return true;
        }
        return false;
    }

    /**
     * How old the version is by the server's clock: {@code Date} − {@code Last-Modified} − 1 s (both
     * have one-second resolution, so the age is never overstated); null when there is no usable Date.
     */
    static Duration age(String dateHeader, OffsetDateTime lastModified) {
        if (dateHeader == null || lastModified == null) return null;
        try {
            ZonedDateTime now = ZonedDateTime.parse(dateHeader, DateTimeFormatter.RFC_1123_DATE_TIME);
            Duration age = Duration.between(lastModified.toInstant(), now.toInstant()).minus(CLOCK_RESOLUTION);
            return age.isNegative() ? Duration.ZERO : age;
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
