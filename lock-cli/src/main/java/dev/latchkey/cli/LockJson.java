package dev.latchkey.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import dev.latchkey.LockInfo;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The {@code --json} output of {@code status} and {@code list}: one JSON document, with field names
 * that are part of the command's interface (README, "The command").
 *
 * <p><b>Guarantee.</b> The output is valid JSON whatever a key, owner or metadata value holds
 * (quotes, backslashes, control characters, any Unicode): Jackson escapes it, and every
 * non-ASCII character as {@code \\uXXXX}. A lock is
 * {@code {"key", "owner", "leaseId", "fencingToken", "acquiredAt", "expiresAt", "metadata"}}, in that
 * order; {@code fencingToken} is {@code null} where the backend declares no FENCING_TOKENS capability,
 * times are ISO-8601 UTC or {@code null} when the store does not know them.
 *
 * <p>jackson-core is the one the GCS SDK brings into the jar; it is deliberately not declared with a
 * version of its own here, which could split it from the SDK's jackson-databind.
 */
final class LockJson {
    /** ASCII only: the document survives any terminal charset (latchkey prints in the platform's). */
    private static final JsonFactory FACTORY = JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    private LockJson() {}

    /** {@code status}: {@code {"key", "held", ...the lock's fields, null when free}}. */
    static String status(String key, Optional<LockInfo> info, boolean hasTokens) {
        return write(g -> {
            g.writeStartObject();
            g.writeStringField("key", key);
            g.writeBooleanField("held", info.isPresent());
            writeHolder(g, info.orElse(null), hasTokens);
            g.writeEndObject();
        });
    }

    /** {@code list}: {@code {"locks": [lock, ...]}} in the given order. */
    static String list(List<LockInfo> locks, boolean hasTokens) {
        return write(g -> {
            g.writeStartObject();
            g.writeArrayFieldStart("locks");
            for (LockInfo info : locks) {
                g.writeStartObject();
                g.writeStringField("key", info.key());
                writeHolder(g, info, hasTokens);
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        });
    }

    /** The fields after {@code key}; all null (metadata empty) for a free lock. */
    private static void writeHolder(JsonGenerator g, LockInfo info, boolean hasTokens) throws IOException {
        g.writeStringField("owner", info == null ? null : info.owner());
        g.writeStringField("leaseId", info == null ? null : info.leaseId());
        g.writeFieldName("fencingToken");
        if (info == null || !hasTokens) {
            g.writeNull();
        } else {
            g.writeNumber(info.fencingToken());
        }
        g.writeStringField("acquiredAt", info == null ? null : iso(info.acquiredAt()));
        g.writeStringField("expiresAt", info == null ? null : iso(info.expiresAt()));
        g.writeObjectFieldStart("metadata");
        // sorted, so the same lock always prints the same document
        for (Map.Entry<String, String> e : new TreeMap<>(info == null ? Map.<String, String>of() : info.metadata()).entrySet()) {
            g.writeStringField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
    }

    private static String iso(Instant t) {
        return t == null ? null : t.toString();
    }

    private interface Body {
        void writeTo(JsonGenerator g) throws IOException;
    }

    private static String write(Body body) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            body.writeTo(g);
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to a string", e); // a StringWriter does not fail
        }
        return out.toString();
    }
}
