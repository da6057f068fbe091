package dev.latchkey.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import dev.latchkey.cli.check.LiveCheck;
import dev.latchkey.cli.check.LiveCheck.Outcome;
import dev.latchkey.cli.check.LiveCheck.Status;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * The results of one {@code latchkey check} for machines: {@code --json} and {@code --report}.
 * The field and element names are part of the command's interface (docs/check.md).
 *
 * <p><b>Guarantee.</b> Both documents are well-formed whatever a failure message holds: Jackson
 * escapes JSON (non-ASCII as {@code \\uXXXX}), the JDK's XML writer escapes markup, and characters
 * XML 1.0 cannot carry at all (most control characters) become {@code ?}. They hold the masked URI
 * only, never a credential. The report file is written to a temporary file and moved into place,
 * so a reader never sees half a report.
 */
final class CheckReport {
    private static final JsonFactory JSON = JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    private final String uri;
    private final String backend;
    private final LiveCheck.Settings settings;
    private final LiveCheck.Summary summary;

    /** @param uri the masked URI; {@code backend} the manager's description */
    CheckReport(String uri, String backend, LiveCheck.Settings settings, LiveCheck.Summary summary) {
        this.uri = uri;
        this.backend = backend;
        this.settings = settings;
        this.summary = summary;
    }

    /**
     * {@code {"uri", "backend", "contracts", "ttlMillis", "casRounds", "casSkipped", "passed", "failed", "skipped",
     * "tests": [{"contract", "test", "status", "seconds", "message"}]}}; {@code contracts} the names of
     * the contracts that ran ({@code locks}, {@code cas}, {@code faults}), {@code casSkipped} the
     * reason or null, {@code status} one of {@code passed}, {@code failed}, {@code skipped},
     * {@code message} the failure's or skip's text or null.
     */
    String json() {
        StringWriter text = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(text)) {
            g.writeStartObject();
            g.writeStringField("uri", uri);
            g.writeStringField("backend", backend);
            g.writeArrayFieldStart("contracts");
            for (LiveCheck.Contract c : settings.contracts()) g.writeString(c.label());
            g.writeEndArray();
            g.writeNumberField("ttlMillis", settings.ttl().toMillis());
            g.writeNumberField("casRounds", settings.casRounds());
            g.writeStringField("casSkipped", settings.casSkipReason());
            g.writeNumberField("passed", summary.passed());
            g.writeNumberField("failed", summary.failed());
            g.writeNumberField("skipped", summary.skipped());
            g.writeArrayFieldStart("tests");
            for (Outcome o : summary.outcomes()) {
                g.writeStartObject();
                g.writeStringField("contract", o.contract());
                g.writeStringField("test", o.test());
                g.writeStringField("status", o.status().name().toLowerCase(Locale.ROOT));
                g.writeNumberField("seconds", seconds(o.took()));
                g.writeStringField("message", o.message().isEmpty() ? null : String.join("\n", o.message()));
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return text.toString();
    }

    /**
     * JUnit XML as CI servers read it: {@code <testsuites>} with one {@code <testsuite name="locks|cas|faults">}
     * per contract, one {@code <testcase classname="latchkey.check.CONTRACT" name="TEST" time="S">}
     * per test, holding {@code <failure message="first line">all lines</failure>} or
     * {@code <skipped message="reason"/>}.
     */
    void writeJUnitXml(Path file) throws IOException {
        Path target = file.toAbsolutePath();
        Path tmp = Files.createTempFile(target.getParent(), ".latchkey-check-", ".xml");
        try {
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                writeXml(w);
            }
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private void writeXml(Writer w) throws IOException {
        Map<String, List<Outcome>> byContract = new LinkedHashMap<>();
        for (Outcome o : summary.outcomes()) byContract.computeIfAbsent(o.contract(), c -> new ArrayList<>()).add(o);
        try {
            XMLStreamWriter x = XMLOutputFactory.newFactory().createXMLStreamWriter(w);
            x.writeStartDocument("UTF-8", "1.0");
            x.writeCharacters("\n");
            x.writeStartElement("testsuites");
            x.writeAttribute("name", xml("latchkey check " + uri));
            counts(x, summary.outcomes());
            x.writeCharacters("\n");
            for (Map.Entry<String, List<Outcome>> suite : byContract.entrySet()) {
                x.writeStartElement("testsuite");
                x.writeAttribute("name", suite.getKey());
                counts(x, suite.getValue());
                x.writeCharacters("\n");
                for (Outcome o : suite.getValue()) {
                    x.writeStartElement("testcase");
                    x.writeAttribute("classname", "latchkey.check." + o.contract());
                    x.writeAttribute("name", xml(o.test()));
                    x.writeAttribute("time", String.format(Locale.ROOT, "%.3f", seconds(o.took())));
                    if (o.status() != Status.PASSED) {
                        String first = o.message().isEmpty() ? o.status().name().toLowerCase(Locale.ROOT) : o.message().get(0);
                        x.writeStartElement(o.status() == Status.FAILED ? "failure" : "skipped");
                        x.writeAttribute("message", xml(first));
                        if (o.status() == Status.FAILED) x.writeCharacters(xml(String.join("\n", o.message())));
                        x.writeEndElement();
                    }
                    x.writeEndElement();
                    x.writeCharacters("\n");
                }
                x.writeEndElement();
                x.writeCharacters("\n");
            }
            x.writeEndElement();
            x.writeCharacters("\n");
            x.writeEndDocument();
            x.flush();
        } catch (XMLStreamException e) {
            throw new IOException("could not write JUnit XML: " + e.getMessage(), e);
        }
    }

    private static void counts(XMLStreamWriter x, List<Outcome> outcomes) throws XMLStreamException {
        long failed = outcomes.stream().filter(o -> o.status() == Status.FAILED).count();
        long skipped = outcomes.stream().filter(o -> o.status() == Status.SKIPPED).count();
        double time = outcomes.stream().mapToDouble(o -> seconds(o.took())).sum();
        x.writeAttribute("tests", Integer.toString(outcomes.size()));
        x.writeAttribute("failures", Long.toString(failed));
        x.writeAttribute("errors", "0");
        x.writeAttribute("skipped", Long.toString(skipped));
        x.writeAttribute("time", String.format(Locale.ROOT, "%.3f", time));
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    /** Characters XML 1.0 can carry; the others (control characters but tab and newlines, lone surrogates) become '?'. */
    private static String xml(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        s.codePoints().forEach(c -> sb.appendCodePoint(
                c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000
                        ? c : '?'));
        return sb.toString();
    }
}
