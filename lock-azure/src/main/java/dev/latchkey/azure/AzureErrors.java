package dev.latchkey.azure;

import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobStorageException;
import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ServerClock;
import java.io.IOException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.concurrent.TimeoutException;

/** Turns Azure SDK failures into {@link LockBackendException}s naming the container, never a credential. */
final class AzureErrors {
    /** Resolution of the {@code Date} and {@code Last-Modified} headers. */

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

    /** How old the version is by the server's clock: {@code Date} − {@code Last-Modified} (one-second resolution). */
    static Duration age(String dateHeader, OffsetDateTime lastModified) {
        return ServerClock.age(ServerClock.httpDate(dateHeader), lastModified == null ? null : lastModified.toInstant(),
                Duration.ofSeconds(1));
    }
}
