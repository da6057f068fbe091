package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code latchkey check} in-process: the whole TCK against {@code mem://} and {@code file://}
 * (which pass it), with few CAS rounds to stay quick, and the exit statuses of a bad URI and of an
 * unreachable store.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES) // hang guard only; nothing here is timed
class CheckCommandTest {
    private static final Pattern SUMMARY = Pattern.compile("(?m)^check: (\\d+) passed, (\\d+) failed, (\\d+) skipped$");

    record Result(int status, String out, String err) {}

    private static Result latchkey(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = LatchkeyCommand.forArgs(Map.of(), new PrintWriter(out, true), new PrintWriter(err, true), args).execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    private static void assertAllPassed(Result r) {
        assertThat(r.status()).as("exit status; output:%n%s%s", r.out(), r.err()).isZero();
        assertThat(r.err()).isEmpty();
        Matcher m = SUMMARY.matcher(r.out());
        assertThat(m.find()).as("summary line in:%n%s", r.out()).isTrue();
        assertThat(Integer.parseInt(m.group(2))).as("failed").isZero();
        assertThat(Integer.parseInt(m.group(1))).as("passed").isPositive();
        assertThat(r.out().lines().filter(l -> l.startsWith("✓ locks ")).count()).as("lock contract tests passed").isPositive();
        assertThat(r.out().lines().filter(l -> l.startsWith("✓ cas ")).count()).as("CAS contract tests passed").isPositive();
        assertThat(r.out().lines().filter(l -> l.startsWith("✓ faults ")).count()).as("store-fault contract tests passed").isPositive();
        assertThat(r.out()).doesNotContain("✗");
    }

    /** (mem://'s store under the engine passes the whole kit through the command in CheckReportTest, as wrapped://ok.) */
    @Test
    void contractOptionRunsOnlyTheNamedContracts() {
        Result r = latchkey("check", "mem://x", "--cas-rounds", "20", "--contract", "cas,faults");
        assertThat(r.status()).as("exit status; output:%n%s%s", r.out(), r.err()).isZero();
        assertThat(r.out()).contains("contracts cas,faults").doesNotContain("✗");
        assertThat(r.out().lines().filter(l -> l.startsWith("✓ cas ")).count()).as("CAS contract tests passed").isPositive();
        assertThat(r.out().lines().filter(l -> l.startsWith("✓ faults ")).count()).as("store-fault contract tests passed").isPositive();
        assertThat(r.out().lines().filter(l -> l.matches("^[✓✗-] locks .*"))).as("lock contract tests").isEmpty();

        Result unknown = latchkey("check", "mem://x", "--contract", "cas,lockz");
        assertThat(unknown.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.err()).contains("--contract: unknown contract 'lockz' (choose from locks, cas, faults, containment)");
    }

    @Test
    void filePassesTheTck(@TempDir Path dir) {
        Result r = latchkey("check", "file://" + dir, "--cas-rounds", "20");
        assertAllPassed(r);
        // a killed latchkey run's job is gone; file:// frees the key at the holder's death, so the window is reported
        assertThat(r.out()).contains("✓ containment killedRunnerTakesItsJobAlong")
                .containsPattern("containment: after latchkey's SIGKILL: its job gone at [0-9]+ ms, the key free at [0-9]+ ms");
    }

    @Test
    void badUriIsAUsageError() {
        Result r = latchkey("check", "not-a-uri");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err().lines()).hasSize(1);
        assertThat(r.out()).isEmpty();

        Result unknown = latchkey("check", "nosuchscheme://x");
        assertThat(unknown.status()).isEqualTo(2);
        assertThat(unknown.err().lines()).hasSize(1).first().asString().contains("installed schemes");
    }

    @Test
    void unreachableStoreExits69BeforeAnyTest(@TempDir Path dir) throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("plain-file"), "x");
        Result r = latchkey("check", "file://" + notADirectory + "/locks");
        assertThat(r.status()).isEqualTo(69);
        assertThat(r.err().lines()).hasSize(1);
        assertThat(r.out()).doesNotContain("passed");
    }
}
