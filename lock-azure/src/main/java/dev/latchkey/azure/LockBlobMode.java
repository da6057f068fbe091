package dev.latchkey.azure;

import com.azure.storage.blob.models.LeaseStateType;
import dev.latchkey.LockBackendException;
import java.util.Locale;
import java.util.Map;

/**
 * Which mode a lock blob belongs to. Both modes keep key K in the same blob,
 * {@code <prefix>/<encoded K>.lock}, so two clients whose URIs differ only in {@code mode=} would
 * otherwise both believe they hold K: {@code mode=lease} takes a blob lease, which does not stop an
 * unleased ETag write from landing first, and {@code mode=etag} writes its record, which a blob
 * lease does not show.
 *
 * <p><b>Guarantee.</b> A blob belongs for good to the mode that created it. {@code mode=etag} keeps
 * its record in the blob's content and marks every upload {@code latchkey_mode=etag};
 * {@code mode=lease} keeps the blob empty, marks it {@code latchkey_mode=lease} when it creates it
 * and again with every holder record. Each mode refuses a blob of the other mode with a
 * non-retriable {@link LockBackendException} ({@link #mismatch}) before it counts itself as
 * holder: {@code mode=lease} once it has the blob lease and before it writes its holder record (it
 * gives the lease back), {@code mode=etag} whenever it reads. So of two clients of one key that
 * disagree on the mode, at most one ever holds it, and a key never changes mode while its blob
 * exists: each mode's fencing counter for it only ever grows. Blobs written before the marker
 * existed are told by their shape: content means {@code mode=etag}; holder metadata, or an empty
 * blob under a lease, means {@code mode=lease}.
 */
final class LockBlobMode {
    static final String LEASE = "lease";
    static final String ETAG = "etag";
    /** The metadata entry naming a blob's mode; Azure compares metadata names case-insensitively. */
    static final String METADATA = "latchkey_mode";
    /** Holder metadata only {@code mode=lease} writes (see {@link HolderMetadata}). */
    private static final String[] LEASE_HOLDER_ENTRIES = {HolderMetadata.LEASE, HolderMetadata.TOKEN};

    private LockBlobMode() {}

    /** The metadata that marks a blob as {@code mode}'s. */
    static Map<String, String> marker(String mode) {
        return Map.of(METADATA, mode);
    }

    /** Whether {@code mode=etag} must leave this blob alone: it was made or last claimed by {@code mode=lease}. */
    static boolean isLeaseBlob(Map<String, String> metadata, LeaseStateType leaseState, long contentLength) {
        String marked = entry(metadata, METADATA);
        if (marked != null) return marked.equals(LEASE);
        for (String e : LEASE_HOLDER_ENTRIES) {
            if (entry(metadata, e) != null) return true;
        }
        return contentLength == 0 && (leaseState == LeaseStateType.LEASED || leaseState == LeaseStateType.BREAKING);
    }

    /** Whether {@code mode=lease} must leave this blob alone: it holds a {@code mode=etag} record. */
    static boolean isEtagBlob(Map<String, String> metadata, long contentLength) {
        String marked = entry(metadata, METADATA);
        return marked != null ? marked.equals(ETAG) : contentLength > 0;
    }

    /**
     * The refusal of a blob of {@code blobMode} by a client of {@code clientMode}: not retriable, as
     * only a change of configuration helps. Moving a prefix to the other mode restarts the fencing
     * tokens of its keys, so the message says how, not just "change the URI".
     */
    static LockBackendException mismatch(String blob, String where, String blobMode, String clientMode) {
        return new LockBackendException("Azure blob " + blob + " in " + where + " is held in (or was last used by) mode="
                + blobMode + "; this client uses mode=" + clientMode + ": every client of a container and prefix must use"
                + " one mode. Give this URI mode=" + blobMode + " like the others; to move keys to mode=" + clientMode
                + ", use a new prefix, or delete their .lock blobs once no client runs (either restarts their fencing"
                + " tokens at 1)", false);
    }

    private static String entry(Map<String, String> metadata, String name) {
        if (metadata == null) return null;
        String exact = metadata.get(name);
        if (exact != null) return exact;
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (e.getKey().toLowerCase(Locale.ROOT).equals(name)) return e.getValue();
        }
        return null;
    }
}
