package dev.latchkey.cli;

import static dev.latchkey.cli.InProcessCli.latchkey;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.cli.InProcessCli.Result;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code status --json} and {@code list --json}: one document, the documented field names in their
 * order, and values that survive any key, owner or metadata (parsed back by a real JSON parser).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS) // hang guard only
class LockJsonTest {
    /** Exactly one JSON document: trailing content fails the parse. */
    private static final ObjectReader ONE_DOCUMENT = new ObjectMapper().readerFor(JsonNode.class)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final List<String> LOCK_FIELDS =
            List.of("key", "owner", "leaseId", "fencingToken", "acquiredAt", "expiresAt", "metadata");
    /** Quotes, backslashes, non-ASCII (a BMP letter, an emoji outside the BMP, right-to-left text). */
    private static final String AWKWARD = "\"q\" \\b\\ é 😀 שלום";

    private String uri;
    private LockManager other;

    @BeforeEach
    void open() {
        uri = "mem://cli-" + UUID.randomUUID();
        other = Latchkey.open(uri);
    }

    @AfterEach
    void close() {
        other.close();
    }

    private static JsonNode parse(String printed) throws Exception {
        assertThat(printed.lines()).as("one line: %s", printed).hasSize(1);
        assertThat(printed.chars()).as("ASCII only, whatever the terminal's charset").allMatch(c -> c < 128);
        return ONE_DOCUMENT.readValue(printed);
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static void assertLock(JsonNode lock, LockInfo expected) {
        assertThat(fieldNames(lock)).containsExactlyElementsOf(LOCK_FIELDS);
        assertThat(lock.get("key").textValue()).isEqualTo(expected.key());
        assertThat(lock.get("owner").textValue()).isEqualTo(expected.owner());
        assertThat(lock.get("leaseId").textValue()).isEqualTo(expected.leaseId());
        assertThat(lock.get("fencingToken").isIntegralNumber()).isTrue();
        assertThat(lock.get("fencingToken").longValue()).isEqualTo(expected.fencingToken()).isPositive();
        assertThat(Instant.parse(lock.get("acquiredAt").textValue())).isEqualTo(expected.acquiredAt());
        assertThat(Instant.parse(lock.get("expiresAt").textValue())).isEqualTo(expected.expiresAt());
    }

    @Test
    void statusJsonOfAFreeLock() throws Exception {
        Result r = latchkey("status", "--uri", uri, "--json", "k");
        assertThat(r.status()).as(r.err()).isZero();
        JsonNode doc = parse(r.out());
        assertThat(fieldNames(doc)).containsExactly("key", "held", "owner", "leaseId", "fencingToken", "acquiredAt",
                "expiresAt", "metadata");
        assertThat(doc).isEqualTo(ONE_DOCUMENT.readValue("{\"key\":\"k\",\"held\":false,\"owner\":null,\"leaseId\":null,"
                + "\"fencingToken\":null,\"acquiredAt\":null,\"expiresAt\":null,\"metadata\":{}}"));
    }

    @Test
    void statusJsonOfAHeldLockWithAwkwardKeyOwnerAndMetadata() throws Exception {
        String key = "jobs/" + AWKWARD;
        try (Lease held = other.tryAcquire(key, LeaseOptions.defaults().withOwner("owner " + AWKWARD)
                .withMetadata(Map.of("cmd", "echo " + AWKWARD))).orElseThrow()) {
            Result r = latchkey("status", "--uri", uri, "--json", key);
            assertThat(r.status()).as(r.err()).isZero();
            JsonNode doc = parse(r.out());
            assertThat(doc.get("held").booleanValue()).isTrue();
            LockInfo recorded = other.inspect(key).orElseThrow();
            assertThat(recorded.leaseId()).isEqualTo(held.leaseId());
            ((ObjectNode) doc).remove("held");
            assertLock(doc, recorded);
            assertThat(fieldNames(doc.get("metadata"))).containsExactly("cmd");
            assertThat(doc.get("metadata").get("cmd").textValue()).isEqualTo("echo " + AWKWARD);
        }
    }

    @Test
    void listJsonIsOneDocumentOfTheLocksUnderThePrefixSortedByKey() throws Exception {
        try (Lease b = other.tryAcquire("jobs/b " + AWKWARD, LeaseOptions.defaults().withOwner(AWKWARD)).orElseThrow();
                Lease a = other.tryAcquire("jobs/a").orElseThrow();
                Lease outside = other.tryAcquire("other").orElseThrow()) {
            Result r = latchkey("list", "--uri", uri, "--json", "jobs/");
            assertThat(r.status()).as(r.err()).isZero();
            JsonNode doc = parse(r.out());
            assertThat(fieldNames(doc)).containsExactly("locks");
            JsonNode locks = doc.get("locks");
            assertThat(locks.size()).isEqualTo(2);
            assertLock(locks.get(0), other.inspect("jobs/a").orElseThrow());
            assertLock(locks.get(1), other.inspect("jobs/b " + AWKWARD).orElseThrow());
        }
        assertThat(parse(latchkey("list", "--uri", uri, "--json").out()))
                .isEqualTo(ONE_DOCUMENT.readValue("{\"locks\":[]}"));
    }

    /**
     * What the store may hold that a lease of this process could not be given: control characters
     * (another client, an older version), a backend without tokens, times it does not know.
     */
    @Test
    void controlCharactersUnknownTimesAndNoTokensStillMakeValidJson() throws Exception {
        String awkward = "a\u0001b\nc\td\u001f\u007f\\\"" + AWKWARD;
        LockInfo info = new LockInfo(awkward, awkward, "lease-" + awkward, 5, null, null, Map.of("m", awkward));
        String status = LockJson.status(awkward, Optional.of(info), false);
        assertThat(status).contains("\\u0001").contains("\\n").doesNotContain("\n");
        JsonNode doc = parse(status);
        assertThat(doc.get("key").textValue()).isEqualTo(awkward);
        assertThat(doc.get("owner").textValue()).isEqualTo(awkward);
        assertThat(doc.get("leaseId").textValue()).isEqualTo("lease-" + awkward);
        assertThat(doc.get("fencingToken").isNull()).as("no FENCING_TOKENS capability: null, not 5 or 0").isTrue();
        assertThat(doc.get("acquiredAt").isNull()).isTrue();
        assertThat(doc.get("expiresAt").isNull()).isTrue();
        assertThat(doc.get("metadata").get("m").textValue()).isEqualTo(awkward);
        JsonNode list = parse(LockJson.list(List.of(info), false));
        assertThat(list.get("locks").get(0).get("key").textValue()).isEqualTo(awkward);
        assertThat(list.get("locks").get(0).get("fencingToken").isNull()).isTrue();
    }

    @Test
    void helpDocumentsTheFields() {
        assertThat(latchkey("status", "--help").out().replaceAll("\\s+", " "))
                .contains("--json").contains("key, held, owner, leaseId, fencingToken (null where the backend has no "
                        + "fencing tokens), acquiredAt, expiresAt (ISO-8601, or null), metadata");
        assertThat(latchkey("list", "--help").out().replaceAll("\\s+", " "))
                .contains("--json").contains("key, owner, leaseId, fencingToken, acquiredAt, expiresAt, metadata");
    }
}
