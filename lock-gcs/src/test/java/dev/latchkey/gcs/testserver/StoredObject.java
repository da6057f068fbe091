package dev.latchkey.gcs.testserver;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** One live object of the {@link GcsTestServer}: immutable, replaced whole by every write. */
record StoredObject(String bucket, String name, long generation, long metageneration, byte[] data,
                    String contentType, Map<String, String> metadata, Instant created, Instant updated) {
    static final DateTimeFormatter RFC3339 =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    /**
     * GCS's preconditions against the live object ({@code null} if none). Must run under
     * the server's lock together with the write it guards. For reads, a failed {@code …NotMatch} is a
     * 304 as on GCS; everything else that fails is 412.
     */
    static void checkPreconditions(StoredObject live, Map<String, String> q, boolean read) throws GcsError {
        String gm = q.get("ifGenerationMatch");
        if (gm != null) {
            long want = Http.parseLong(gm, "ifGenerationMatch");
            long have = live == null ? 0 : live.generation();
            if (want != have) throw conditionNotMet("ifGenerationMatch");
        }
        String gnm = q.get("ifGenerationNotMatch");
        if (gnm != null) {
            long notWant = Http.parseLong(gnm, "ifGenerationNotMatch");
            long have = live == null ? 0 : live.generation();
            if (notWant == have) {
                if (read) throw new GcsError(304, "notModified", "Not Modified");
                throw conditionNotMet("ifGenerationNotMatch");
            }
        }
        String mm = q.get("ifMetagenerationMatch");
        if (mm != null && (live == null || live.metageneration() != Http.parseLong(mm, "ifMetagenerationMatch"))) {
            throw conditionNotMet("ifMetagenerationMatch");
        }
        String mnm = q.get("ifMetagenerationNotMatch");
        if (mnm != null && live != null && live.metageneration() == Http.parseLong(mnm, "ifMetagenerationNotMatch")) {
            if (read) throw new GcsError(304, "notModified", "Not Modified");
            throw conditionNotMet("ifMetagenerationNotMatch");
        }
    }

    static GcsError conditionNotMet(String which) {
        return new GcsError(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold. (" + which + ")");
    }

    /**
     * The object resource, as {@code objects.get} returns it; links point at {@code endpoint}, times
     * shown {@code shift} earlier than stamped (the server's clock step, see {@link Adversary#stepClock}).
     */
    Map<String, Object> json(String endpoint, Duration shift) {
        Map<String, Object> m = new LinkedHashMap<>();
        String enc = Http.encodeSegment(name());
        m.put("kind", "storage#object");
        m.put("id", bucket() + "/" + name() + "/" + generation());
        m.put("selfLink", endpoint + "/storage/v1/b/" + bucket() + "/o/" + enc);
        m.put("mediaLink", endpoint + "/download/storage/v1/b/" + bucket() + "/o/" + enc
                + "?generation=" + generation() + "&alt=media");
        m.put("name", name());
        m.put("bucket", bucket());
        m.put("generation", Long.toString(generation()));
        m.put("metageneration", Long.toString(metageneration()));
        m.put("contentType", contentType());
        m.put("storageClass", "STANDARD");
        m.put("size", Integer.toString(data().length));
        m.put("md5Hash", Http.md5(data()));
        m.put("crc32c", Http.crc32c(data()));
        m.put("etag", etag());
        m.put("timeCreated", RFC3339.format(created().minus(shift)));
        m.put("updated", RFC3339.format(updated().minus(shift)));
        m.put("timeStorageClassUpdated", RFC3339.format(created().minus(shift)));
        if (!metadata().isEmpty()) m.put("metadata", new LinkedHashMap<>(metadata()));
        return m;
    }

    String etag() {
        return Base64.getEncoder().encodeToString((generation + "/" + metageneration).getBytes(StandardCharsets.UTF_8));
    }
}
