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
import org.junit.jupiter.api.Test;

/**
 * No {@code synchronized} in the main sources of lock-api and lock-postgres. On Java 21 to 23 a
 * virtual thread that blocks inside a monitor — on store I/O, {@code Object.wait}, a contended
 * monitor, or a {@code java.util.concurrent} lock taken inside one — pins its carrier thread, and
 * enough of them stall every virtual thread of the application. A
 * {@link java.util.concurrent.locks.ReentrantLock} (with a {@code Condition} for waits) costs the
 * same and never pins, so the rule is simply: no monitors. Java 24 and later no longer pin on
 * monitors (JEP 491), so no run-time probe on those JDKs could catch a monitor coming back; this
 * check does, on every JDK the build runs on.
 */
class NoMonitorsTest {
    private static final List<String> MODULES = List.of("lock-api", "lock-postgres");
    /** Comments, text blocks, strings and characters: what {@code synchronized} inside is no monitor. */
    private static final Pattern NOT_CODE = Pattern.compile(
            "//[^\\n]*|/\\*.*?\\*/|\"\"\".*?\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])+'", Pattern.DOTALL);
    private static final Pattern MONITOR = Pattern.compile("\\bsynchronized\\b");

    @Test
    void mainSourcesUseLocksNotMonitors() throws IOException {
        Path root = Path.of(System.getProperty("latchkey.repo.root", ".."));
        List<String> found = new ArrayList<>();
        int files = 0;
        for (String module : MODULES) {
            Path sources = root.resolve(module).resolve("src/main/java");
            assertThat(sources).as("main sources of " + module + " (latchkey.repo.root=" + root + ")").isDirectory();
            try (Stream<Path> walk = Files.walk(sources)) {
                for (Path file : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
                    files++;
                    found.addAll(monitors(root.relativize(file), Files.readString(file)));
                }
            }
        }
        assertThat(files).as("source files scanned").isGreaterThan(50);
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
}
