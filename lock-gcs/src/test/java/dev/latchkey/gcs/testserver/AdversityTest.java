package dev.latchkey.gcs.testserver;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What each {@link Adversity} makes the test server do, over raw HTTP (no client retries), with a
 * fixed seed: each inconvenient behaviour happens, and the guarantees GCS does give still hold.
 */
class AdversityTest {
    private static final long SEED = 28;
    private static final String BUCKET = "adverse";
    private static final Pattern GENERATION = Pattern.compile("\"generation\"\\s*:\\s*\"(\\d+)\"");
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> upload(GcsTestServer s, String name, String condition, String token) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(s.endpoint() + "/upload/storage/v1/b/" + BUCKET
                        + "/o?uploadType=media&name=" + name + (condition == null ? "" : "&" + condition)))
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("x"));
        if (token != null) r.header("Authorization", "Bearer " + token);
        return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> delete(GcsTestServer s, String name) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(s.endpoint() + "/storage/v1/b/" + BUCKET + "/o/" + name))
                .DELETE().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static long generation(HttpResponse<String> r) {
        Matcher m = GENERATION.matcher(r.body());
        assertThat(m.find()).as("generation in %s", r.body()).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void generationsAreUniqueButNotIncreasing() throws Exception {
        try (GcsTestServer s = GcsTestServer.start(0, Duration.ZERO, Adversity.seeded(SEED))) {
            s.createBucket(BUCKET);
            List<Long> generations = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                generations.add(generation(upload(s, "g", null, null)));
                if (i % 5 == 4) assertThat(delete(s, "g").statusCode()).isEqualTo(204);
            }
            assertThat(new HashSet<>(generations)).as("distinct generations of one name").hasSize(generations.size());
            assertThat(generations).as("generations in the order given").isNotEqualTo(generations.stream().sorted().toList());
            assertThat(generations).allMatch(g -> g > 0);
        }
    }

    /** The storage's clock against the true time, which the JDK's server stamps as {@code Date}. */
    @Test
    void theTwoClocksDriftApartWithinTheirBound() {
        Adversary adversary = new Adversary(Adversity.seeded(SEED));
        long widest = 0;
        for (int i = 0; i < 1000; i++) {
            Duration apart = Duration.between(adversary.storageNow(), Instant.now()).abs();
            widest = Math.max(widest, apart.toNanos());
        }
        assertThat(Duration.ofNanos(widest)).isGreaterThan(Duration.ZERO)
                .isLessThanOrEqualTo(Adversity.DEFAULT_CLOCK_DRIFT.plusMillis(5));
    }

    @Test
    void burstsAreSometimesAdmittedAndSometimesRefused() throws Exception {
        try (GcsTestServer s = GcsTestServer.start(0, Duration.ofHours(1), Adversity.seeded(SEED))) {
            s.createBucket(BUCKET);
            Set<Integer> answers = new HashSet<>();
            int admitted = 0;
            for (int i = 0; i < 40; i++) {
                assertThat(upload(s, "burst-" + i, null, null).statusCode()).isEqualTo(200);
                int second = upload(s, "burst-" + i, null, null).statusCode();
                answers.add(second);
                if (second == 200) admitted++;
            }
            assertThat(answers).as("answers to a second write within the interval").containsExactlyInAnyOrder(200, 429);
            assertThat(s.adversityCounts().burstsAdmitted()).isEqualTo(admitted);
            // a refused precondition is a 412 whatever the rate
            assertThat(upload(s, "burst-0", "ifGenerationMatch=0", null).statusCode()).isEqualTo(412);
        }
    }

    @Test
    void chaosFailsRequestsBeforeAndAfterApplyingThem() throws Exception {
        try (GcsTestServer s = GcsTestServer.start(0, Duration.ZERO, Adversity.seeded(SEED).chaos(0.3))) {
            s.createBucket(BUCKET);
            Set<Integer> codes = new HashSet<>();
            List<String> failedCreates = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                int code = upload(s, "chaos-" + i, "ifGenerationMatch=0", null).statusCode();
                codes.add(code);
                if (code != 200) failedCreates.add("chaos-" + i);
            }
            assertThat(codes).isSubsetOf(200, 408, 500, 502, 503, 504).contains(200).hasSizeGreaterThan(2);
            // a failed create either did nothing or was applied: a second create tells which
            int applied = 0;
            for (String name : failedCreates) {
                int again;
                do {
                    again = upload(s, name, "ifGenerationMatch=0", null).statusCode();
                } while (again != 200 && again != 412); // chaos answers this one too, sometimes
                if (again == 412) applied++;
            }
            assertThat(applied).as("of %s failed creates, applied", failedCreates.size())
                    .isPositive().isLessThan(failedCreates.size());
            assertThat(s.adversityCounts().faultsAfterWrite()).isPositive();
            assertThat(s.adversityCounts().faultsBefore()).isPositive();
        }
    }

    @Test
    void credentialsAreCheckedAndNeverEchoed() throws Exception {
        String token = "ya29.secret-write";
        try (GcsTestServer s = GcsTestServer.start(0, Duration.ZERO,
                Adversity.seeded(SEED).token(token, true).token("ya29.secret-read", false))) {
            s.createBucket(BUCKET);
            HttpResponse<String> none = upload(s, "auth", null, null);
            HttpResponse<String> wrong = upload(s, "auth", null, "ya29.wrong");
            HttpResponse<String> readOnly = upload(s, "auth", null, "ya29.secret-read");
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.body()).contains("Anonymous caller");
            assertThat(wrong.statusCode()).isEqualTo(401);
            assertThat(wrong.body()).contains("Invalid Credentials").doesNotContain("ya29");
            assertThat(readOnly.statusCode()).isEqualTo(403);
            assertThat(readOnly.body()).doesNotContain("ya29");
            assertThat(upload(s, "auth", null, token).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void ignoringPreconditionsLetsASecondCreateThrough() throws Exception {
        try (GcsTestServer s = GcsTestServer.start(0, Duration.ZERO, Adversity.none().ignoringPreconditions())) {
            s.createBucket(BUCKET);
            assertThat(upload(s, "twice", "ifGenerationMatch=0", null).statusCode()).isEqualTo(200);
            assertThat(upload(s, "twice", "ifGenerationMatch=0", null).statusCode()).isEqualTo(200);
        }
    }
}
