package dev.latchkey.engine;

import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The record the {@link LeaseEngine} keeps under each key: a few {@code name=value} lines of UTF-8,
 * values percent-encoded, first line {@code latchkey-lease 1}. Self-describing so an operator can
 * read it with {@code cat} or {@code aws s3 cp … -}; no JSON library needed.
 *
 * <p>A released lock keeps its record ({@code state=RELEASED}) so the fencing counter survives.
 * {@code leaseId} is empty after a force release, so a broken holder can tell its own release
 * (retried by an SDK) from someone breaking it.
 *
 * @param held      true while a lease holds the key
 * @param key       the lock key (names of long keys are hashed: the key lives here)
 * @param leaseId   the holder's lease id; on a released record, the last holder's (empty if broken)
 * @param owner     the holder's owner string
 * @param token     fencing token of the last acquisition
 * @param acquiredAt holder's wall clock at acquisition (informational)
 * @param ttlMillis  the holder's TTL: how long the record stays valid after its last write
 * @param renewedAt holder's wall clock at last write (informational)
 * @param metadata  caller metadata
 */
record LeaseRecord(boolean held, String key, String leaseId, String owner, long token,
                   Instant acquiredAt, long ttlMillis, Instant renewedAt, Map<String, String> metadata) {
    private static final String MAGIC = "latchkey-lease 1";

    LeaseRecord released(boolean keepLeaseId) {
        return new LeaseRecord(false, key, keepLeaseId ? leaseId : "", owner, token, acquiredAt, ttlMillis,
                renewedAt, metadata);
    }

    LeaseRecord renewedAt(Instant now) {
        return new LeaseRecord(held, key, leaseId, owner, token, acquiredAt, ttlMillis, now, metadata);
    }

    LockInfo toInfo() {
        return new LockInfo(key, owner, leaseId, token, acquiredAt, renewedAt.plusMillis(ttlMillis), metadata);
    }

    byte[] encode() {
        StringBuilder sb = new StringBuilder(256).append(MAGIC).append('\n');
        line(sb, "state", held ? "HELD" : "RELEASED");
        line(sb, "key", key);
        line(sb, "leaseId", leaseId);
        line(sb, "owner", owner);
        line(sb, "token", Long.toString(token));
        line(sb, "acquiredAt", acquiredAt.toString());
        line(sb, "ttlMillis", Long.toString(ttlMillis));
        line(sb, "renewedAt", renewedAt.toString());
        metadata.forEach((k, v) -> line(sb, "meta." + k, v));
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void line(StringBuilder sb, String name, String value) {
        sb.append(name).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8)).append('\n');
    }

    /** @throws LockBackendException if the bytes are not a lease record (someone else's object?) */
    static LeaseRecord decode(byte[] data, String where) {
        String text = new String(data, StandardCharsets.UTF_8);
        String[] lines = text.split("\n");
        if (lines.length == 0 || !lines[0].equals(MAGIC)) {
            throw new LockBackendException("not a latchkey lease record at " + where
                    + " (another program's object under the lock prefix?)", false);
        }
        Map<String, String> f = new LinkedHashMap<>();
        Map<String, String> meta = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int eq = lines[i].indexOf('=');
            if (eq <= 0) continue;
            String name = lines[i].substring(0, eq);
            String value = URLDecoder.decode(lines[i].substring(eq + 1), StandardCharsets.UTF_8);
            if (name.startsWith("meta.")) meta.put(name.substring(5), value);
            else f.put(name, value);
        }
        try {
            return new LeaseRecord("HELD".equals(f.get("state")), f.get("key"), f.getOrDefault("leaseId", ""),
                    f.getOrDefault("owner", "unknown"), Long.parseLong(f.get("token")),
                    Instant.parse(f.get("acquiredAt")), Long.parseLong(f.get("ttlMillis")),
                    Instant.parse(f.get("renewedAt")), Map.copyOf(meta));
        } catch (RuntimeException e) {
            throw new LockBackendException("corrupt latchkey lease record at " + where + ": " + e.getMessage(), false, e);
        }
    }
}
