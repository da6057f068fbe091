package dev.latchkey.cli;

import static dev.latchkey.cli.InProcessCli.latchkey;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * {@code latchkey check} for pipelines: the CAS races run for a backend that wraps the lease engine
 * (declares CONDITIONAL_STORE, exposes its store through the SPI), {@code --json} and
 * {@code --report} say the same as the human output, and a failing check gives a JUnit failure
 * and a non-zero status.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES) // hang guard only; nothing here is timed
class CheckReportTest {
    @TempDir
    Path dir;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** {@code contract status} of every test of the JSON document. */
    private static List<String> statuses(JsonNode doc) {
        List<String> s = new ArrayList<>();
        doc.get("tests").forEach(t -> s.add(t.get("contract").asText() + " " + t.get("status").asText()));
        return s;
    }

    @Test
    void aBackendThatWrapsTheEngineHasItsRacesRunAndReported() throws Exception {
        Path report = dir.resolve("check.xml");
        InProcessCli.Result r = latchkey("check", "wrapped://ok", "--cas-rounds", "10", "--json", "--report", report.toString());

        assertThat(r.status()).as("status; stderr:%n%s", r.err()).isZero();
        JsonNode doc = JSON.readTree(r.out()); // stdout is the document alone
        assertThat(doc.get("uri").asText()).isEqualTo("wrapped://ok");
        assertThat(doc.get("contracts").toString()).isEqualTo("[\"locks\",\"cas\",\"faults\",\"containment\"]");
        assertThat(doc.get("casSkipped").isNull()).isTrue();
        assertThat(doc.get("failed").asInt()).isZero();
        assertThat(statuses(doc)).contains("cas passed", "faults passed", "locks passed");
        // a cas test may skip for a reason of its own (a store that cannot wake waiters), never for the backend's
        doc.get("tests").forEach(t -> {
            if (!t.get("contract").asText().equals("locks") && t.get("status").asText().equals("skipped")) {
                assertThat(t.get("message").asText()).doesNotContain("CONDITIONAL_STORE").doesNotContain("--skip-cas");
            }
        });
        assertThat(doc.get("passed").asInt() + doc.get("skipped").asInt()).isEqualTo(doc.get("tests").size());
        assertThat(r.err()).contains("✓ cas racingCreatesHaveExactlyOneWinner");

        Element suites = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(report.toFile()).getDocumentElement();
        assertThat(suites.getTagName()).isEqualTo("testsuites");
        assertThat(suites.getAttribute("tests")).isEqualTo(Integer.toString(doc.get("tests").size()));
        assertThat(suites.getAttribute("failures")).isEqualTo("0");
        assertThat(suites.getElementsByTagName("failure").getLength()).isZero();
        assertThat(suites.getElementsByTagName("testcase").getLength()).isEqualTo(doc.get("tests").size());
        List<String> suiteNames = new ArrayList<>();
        NodeList ns = suites.getElementsByTagName("testsuite");
        for (int i = 0; i < ns.getLength(); i++) suiteNames.add(((Element) ns.item(i)).getAttribute("name"));
        assertThat(suiteNames).containsExactlyInAnyOrder("locks", "cas", "faults", "containment");
    }

    @Test
    void aFailingCheckIsAJUnitFailureAndANonZeroStatus() throws Exception {
        Path report = dir.resolve("check.xml");
        InProcessCli.Result r = latchkey("check", "wrapped://lying-store", "--cas-rounds", "5", "--contract", "cas",
                "--report", report.toString());

        assertThat(r.status()).as("status; output:%n%s%s", r.out(), r.err()).isEqualTo(ExitCodes.FAILURE);
        assertThat(r.out()).contains("✗ cas racingCreatesHaveExactlyOneWinner");

        Document xml = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(report.toFile());
        NodeList cases = xml.getElementsByTagName("testcase");
        Element racing = null;
        for (int i = 0; i < cases.getLength(); i++) {
            Element c = (Element) cases.item(i);
            if (c.getAttribute("name").equals("racingCreatesHaveExactlyOneWinner")) racing = c;
        }
        assertThat(racing).as("testcase racingCreatesHaveExactlyOneWinner").isNotNull();
        assertThat(racing.getAttribute("classname")).isEqualTo("latchkey.check.cas");
        NodeList failures = racing.getElementsByTagName("failure");
        assertThat(failures.getLength()).isEqualTo(1);
        assertThat(((Element) failures.item(0)).getAttribute("message")).isNotBlank();
        assertThat(Integer.parseInt(xml.getDocumentElement().getAttribute("failures"))).isPositive();
        NodeList suites = xml.getElementsByTagName("testsuite");
        assertThat(suites.getLength()).as("suites of a --contract cas check").isEqualTo(1);
        assertThat(((Element) suites.item(0)).getAttribute("name")).isEqualTo("cas");
    }

    @Test
    void aWrapperThatDoesNotExposeItsStoreIsToldWhy() {
        // interposed:// wraps the engine too but keeps the provider's default openStore: no store to race
        InProcessCli.Result r = latchkey("check", "interposed://x", "--json", "--cas-rounds", "1", "--contract", "cas");
        assertThat(r.err()).contains("cas skipped");
        assertThat(r.out()).contains("\"casSkipped\":\"this backend declares CONDITIONAL_STORE but its provider "
                + "does not expose the store (LockProvider.openStore)\"");
    }
}
