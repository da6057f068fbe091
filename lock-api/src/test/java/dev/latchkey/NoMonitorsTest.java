package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

/**
 * No {@code synchronized} in the main sources of any module of the build. On Java 21 to 23 a
 * virtual thread that blocks inside a monitor — on store I/O, {@code Object.wait}, a contended
 * monitor, or a {@code java.util.concurrent} lock taken inside one — pins its carrier thread, and
 * enough of them stall every virtual thread of the application. A
 * {@link java.util.concurrent.locks.ReentrantLock} (with a {@code Condition} for waits) costs the
 * same and never pins, so the rule is simply: no monitors, in the library, its backends, the
 * command, the TCK (which runs inside a backend author's tests) and the benchmarks alike. Java 24
 * and later no longer pin on monitors (JEP 491), so no run-time probe on those JDKs could catch a
 * monitor coming back; this check does, on every JDK the build runs on.
 *
 * <p>The modules are those the root {@code pom.xml} lists in {@code <modules>} (and, for an
 * aggregator among them, its own), read by the test itself: a new module is covered without
 * editing it, and with it its bench code (src/bench/java). Every module that builds a jar must have
 * main sources to scan (or, test-only, tests), so a wrong root or a
 * moved source folder fails instead of passing on nothing.
 */
class NoMonitorsTest {
    /** Comments, text blocks, strings and characters: what {@code synchronized} inside is no monitor. */
    private static final Pattern NOT_CODE = Pattern.compile(
            "//[^\\n]*|/\\*.*?\\*/|\"\"\".*?\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])+'", Pattern.DOTALL);
    private static final Pattern MONITOR = Pattern.compile("\\bsynchronized\\b");

    @Test
    void mainSourcesUseLocksNotMonitors() throws IOException {
        Path root = Path.of(System.getProperty("latchkey.repo.root", "..")).normalize();
        List<Path> modules = modules(root);
        assertThat(modules).as("modules of " + root.resolve("pom.xml") + " (latchkey.repo.root=" + root + ")")
                .contains(root.resolve("lock-api")); // this test's own module: the list was read
        List<String> found = new ArrayList<>();
        int files = 0;
        for (Path module : modules) {
            if (packaging(module).equals("pom")) continue; // a BOM or an aggregator: no sources of its own
            // main sources, and the bench code (src/bench/java) that runs beside them in the benchmarks
            List<Path> sources = Stream.of("src/main/java", "src/bench/java").map(module::resolve)
                    .filter(Files::isDirectory).toList();
            if (sources.isEmpty()) {
                assertThat(module.resolve("src/test/java")).as("main or test sources of " + root.relativize(module)
                        + ", a jar module (a test-only module has tests)").isDirectory();
                continue;
            }
            int before = files;
            for (Path dir : sources) {
                try (Stream<Path> walk = Files.walk(dir)) {
                    for (Path file : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
                        files++;
                        found.addAll(monitors(root.relativize(file), Files.readString(file)));
                    }
                }
            }
            assertThat(files - before).as("Java files under " + sources).isPositive();
        }
        assertThat(files).as("source files scanned in " + modules.size() + " modules").isGreaterThan(150);
        assertThat(found)
                .as("synchronized pins virtual threads on Java 21-23 when it blocks: use a"
                        + " java.util.concurrent.locks.ReentrantLock (and its Condition for waits) instead")
                .isEmpty();
    }

    @Test
    void theScanSeesMonitorsInCodeOnly() {
        String source = "class A {\n"
                + "  // synchronized in a comment\n"
                + "  /* and synchronized\n in a block */ String s = \"synchronized \\\" here\";\n"
                + "  char c = '\"'; synchronized void m() {}\n"
                + "  void n() { synchronized (this) {} }\n"
                + "}\n";
        assertThat(monitors(Path.of("A.java"), source)).containsExactly("A.java:5", "A.java:6");
    }

    /** {@code file:line} of each {@code synchronized} in code (not in comments or literals). */
    private static List<String> monitors(Path file, String source) {
        Matcher notCode = NOT_CODE.matcher(source);
        StringBuilder code = new StringBuilder();
        while (notCode.find()) {
            // keep the newlines of what is blanked, so line numbers stay right
            notCode.appendReplacement(code, notCode.group().replaceAll("[^\\n]", " "));
        }
        notCode.appendTail(code);
        List<String> found = new ArrayList<>();
        Matcher m = MONITOR.matcher(code);
        while (m.find()) {
            long line = code.subSequence(0, m.start()).chars().filter(ch -> ch == '\n').count() + 1;
            found.add(file + ":" + line);
        }
        return found;
    }

    /** The folders of the modules {@code dir/pom.xml} lists, and of theirs, in order. */
    private static List<Path> modules(Path dir) throws IOException {
        List<Path> modules = new ArrayList<>();
        Element project = pom(dir);
        for (Element list : children(project, "modules")) {
            for (Element module : children(list, "module")) {
                Path child = dir.resolve(module.getTextContent().trim()).normalize();
                modules.add(child);
                modules.addAll(modules(child));
            }
        }
        return modules;
    }

    /** The module's {@code <packaging>}, {@code jar} by default. */
    private static String packaging(Path module) throws IOException {
        List<Element> packaging = children(pom(module), "packaging");
        return packaging.isEmpty() ? "jar" : packaging.get(0).getTextContent().trim();
    }

    private static Element pom(Path dir) throws IOException {
        Path pom = dir.resolve("pom.xml");
        try {
            Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
            return doc.getDocumentElement();
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot read " + pom + ": " + e.getMessage(), e);
        }
    }

    /** The direct children of {@code parent} named {@code name} (not those of a profile or a plugin). */
    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) found.add(e);
        }
        return found;
    }
}
