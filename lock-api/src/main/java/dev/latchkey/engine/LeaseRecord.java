package dev.latchkey.engine;

import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The record the {@link ConditionalStoreLockManager} keeps under each key: a few {@code name=value} lines of UTF-8,
 * values percent-encoded, first line {@code latchkey-lease 1}. Self-describing so an operator can
 * read it with {@code cat} or {@code aws s3 cp … -}; no JSON library needed. Values are UTF-8
 * with {@code %}, and control characters percent-escaped.
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
 * @param revision  which write of this lease the record is: 0 for the acquisition, then one more
 *                  per renewal. The lease id alone cannot tell a holder which of its own writes
 *                  landed (a renewal whose reply was lost, an SDK retry); the revision can.
 * @param acquiredAt holder's wall clock at acquisition (informational; stored as epoch milliseconds,
 *                   which parse a hundred times faster than ISO text on the hot path)
 * @param ttlMillis  the holder's TTL: how long the record stays valid after its last write
 * @param renewedAt holder's wall clock at last write (informational; epoch milliseconds)
 * @param metadata  caller metadata
 */
record LeaseRecord(boolean held, String key, String leaseId, String owner, long token, long revision,
                   Instant acquiredAt, long ttlMillis, Instant renewedAt, Map<String, String> metadata) {
    private static final String MAGIC = "latchkey-lease 1";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    LeaseRecord released(boolean keepLeaseId) {
        return new LeaseRecord(false, key, keepLeaseId ? leaseId : "", owner, token, revision, acquiredAt, ttlMillis,
                renewedAt, metadata);
    }

    /** A later write of this lease: revision {@code revision}, renewed at {@code now}, valid for {@code ttlMillis} from then. */
    LeaseRecord renewedAt(Instant now, long revision, long ttlMillis) {
        return new LeaseRecord(held, key, leaseId, owner, token, revision, acquiredAt, ttlMillis, now, metadata);
    }

    /** True if {@code other} is a write of this same lease (held, same lease id). */
    boolean sameLease(LeaseRecord other) {
        return other != null && other.held && held && other.leaseId.equals(leaseId);
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
        if (revision != 0) line(sb, "revision", Long.toString(revision));
        line(sb, "acquiredAt", Long.toString(acquiredAt.toEpochMilli()));
        line(sb, "ttlMillis", Long.toString(ttlMillis));
        line(sb, "renewedAt", Long.toString(renewedAt.toEpochMilli()));
        metadata.forEach((k, v) -> line(sb, "meta." + k, v));
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void line(StringBuilder sb, String name, String value) {
        sb.append(name).append('=');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            // one record line per field: escape only what could break the line or the escape itself
            if (c == '%' || c < 0x20 || c == 0x7f) {
                sb.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            } else {
                sb.append(c);
            }
        }
        sb.append('\n');
    }

    private static String unescape(String value) {
        return value.indexOf('%') < 0 ? value : URLDecoder.decode(value.replace("+", "%2B"), StandardCharsets.UTF_8);
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
            String value = unescape(lines[i].substring(eq + 1));
            if (name.startsWith("meta.")) meta.put(name.substring(5), value);
            else f.put(name, value);
        }
        try {
            return new LeaseRecord("HELD".equals(f.get("state")), f.get("key"), f.getOrDefault("leaseId", ""),
                    f.getOrDefault("owner", "unknown"), Long.parseLong(f.get("token")),
                    Long.parseLong(f.getOrDefault("revision", "0")),
                    time(f.get("acquiredAt")), Long.parseLong(f.get("ttlMillis")), time(f.get("renewedAt")),
                    Map.copyOf(meta));
        } catch (RuntimeException e) {
            throw new LockBackendException("corrupt latchkey lease record at " + where + " (" + e.getMessage()
                    + "): Latchkey will not guess whether it is held; read it, and delete it by hand once no"
                    + " process can hold that lock", false, e);
        }
    }

    /** Epoch milliseconds; ISO-8601, which the first builds wrote, is still read so their records stay usable. */
    private static Instant time(String value) {
        return value.indexOf('T') < 0 ? Instant.ofEpochMilli(Long.parseLong(value)) : Instant.parse(value);
    }
}
