package dev.latchkey.azure;

import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The holder record of a {@code mode=lease} lock blob, kept in the blob's metadata: key, owner,
 * lease id, fencing token, acquisition time, TTL, caller metadata, and the {@link LockBlobMode}
 * marker. Values are percent-encoded, as metadata values must be ASCII header values. The token is
 * the blob's fencing counter: each holder writes the last one plus one, under its lease.
 */
final class HolderMetadata {
    static final String KEY = "latchkey_key";
    static final String OWNER = "latchkey_owner";
    static final String LEASE = "latchkey_lease";
    static final String TOKEN = "latchkey_token";
    static final String ACQUIRED = "latchkey_acquired";
    static final String TTL = "latchkey_ttl_ms";
    static final String META = "latchkey_meta";

    private HolderMetadata() {}

    /** The whole metadata of the blob while {@code leaseId} holds {@code key} with {@code token}. */
    static Map<String, String> of(String key, String leaseId, long token, Instant acquired, LeaseOptions options) {
        Map<String, String> meta = new HashMap<>(LockBlobMode.marker(LockBlobMode.LEASE));
        meta.put(KEY, enc(key));
        meta.put(OWNER, enc(options.owner()));
        meta.put(LEASE, leaseId);
        meta.put(TOKEN, Long.toString(token));
        meta.put(ACQUIRED, acquired.toString());
        meta.put(TTL, Long.toString(options.ttl().toMillis()));
        if (!options.metadata().isEmpty()) meta.put(META, encodeMap(options.metadata()));
        return meta;
    }

    /**
     * The last fencing token the blob recorded; 0 if none.
     *
     * @throws LockBackendException (not retriable) if the recorded token is not a number: guessing
     *         would let the next token go backwards
     */
    static long token(Map<String, String> raw, String where) {
        String recorded = lower(raw).get(TOKEN);
        if (recorded == null) return 0;
        try {
            return Long.parseLong(recorded);
        } catch (NumberFormatException e) {
            throw new LockBackendException("the fencing token recorded on " + where + " is not a number ('" + recorded
                    + "'); Latchkey will not guess the next one. Delete the blob once no process can hold that lock", false, e);
        }
    }

    /** The lease id of the last recorded holder, or null. */
    static String leaseId(Map<String, String> raw) {
        return lower(raw).get(LEASE);
    }

    /** Holder info from blob metadata; null if the blob records no holder of {@code expectedKey} (any key if null). */
    static LockInfo info(Map<String, String> raw, String expectedKey) {
        Map<String, String> m = lower(raw);
        if (m.get(KEY) == null) return null;
        String key = dec(m.get(KEY));
        if (expectedKey != null && !expectedKey.equals(key)) return null;
        Instant acquired = null;
        try {
            if (m.get(ACQUIRED) != null) acquired = Instant.parse(m.get(ACQUIRED));
        } catch (DateTimeParseException e) {
            acquired = null; // informational only
        }
        // renewals are not written, so only the holder knows its current expiry
        return new LockInfo(key, m.get(OWNER) == null ? null : dec(m.get(OWNER)), m.get(LEASE),
                parseLong(m.get(TOKEN)), acquired, null, decodeMap(m.get(META)));
    }

    private static Map<String, String> lower(Map<String, String> raw) {
        Map<String, String> m = new HashMap<>();
        if (raw != null) raw.forEach((k, v) -> m.put(k.toLowerCase(Locale.ROOT), v));
        return m;
    }

    private static long parseLong(String s) {
        if (s == null) return 0;
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String dec(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static String encodeMap(Map<String, String> map) {
        StringBuilder sb = new StringBuilder();
        map.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : "&").append(enc(k)).append('=').append(enc(v)));
        return enc(sb.toString());
    }

    private static Map<String, String> decodeMap(String s) {
        Map<String, String> out = new LinkedHashMap<>();
        if (s == null || s.isEmpty()) return out;
        for (String pair : dec(s).split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) out.put(dec(pair.substring(0, eq)), dec(pair.substring(eq + 1)));
        }
        return out;
    }
}
