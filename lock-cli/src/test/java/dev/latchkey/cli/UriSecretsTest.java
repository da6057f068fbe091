package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * User info holding unencoded {@code / ? # @} never shows: not in any exception (causes included) of
 * any scheme's provider, not in a manager's description, not in the command's output, {@code -v}
 * included. No server is reached: the servers' addresses are closed loopback ports.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // hang guard only
class UriSecretsTest {
    /** Every fragment contains "PW" or "alice"; the whole is the user info of each URI below. */
    static final String INFO = "alice:PWa/PWb?PWc#PWd@PWe";

    /** Each scheme's URI with {@link #INFO}; the host:port ones point at a closed port. */
    static final String[] URIS = {
        "postgres://" + INFO + "@127.0.0.1:1/db",
        "postgres://" + INFO + "@127.0.0.1:1/db?mode=lease",
        "clickhouse://" + INFO + "@127.0.0.1:1/db",
        "s3://" + INFO + "@bucket/prefix?region=eu-west-1",
        "gs://" + INFO + "@bucket/prefix",
        "azblob://" + INFO + "@container/prefix?account=acct",
        "file://" + INFO + "@/tmp/latchkey-secrets-test",
        "mem://" + INFO + "@name",
        // the brief's own example: an unencoded '/' and '?' before the '@'
        "postgres://u:PWp/a?ss@127.0.0.1:1/db",
    };

    static void assertNoSecret(String shown, String what) {
        assertThat(shown).as(what).doesNotContain("PW").doesNotContain("alice").doesNotContain("/a?ss");
    }

    private static void assertNoSecret(Throwable e, String what) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            assertNoSecret(String.valueOf(t.getMessage()), what + ": " + t.getClass().getName());
            for (Throwable s : t.getSuppressed()) assertNoSecret(s, what + " (suppressed)");
        }
    }

    @Test
    void providersNeverShowTheUserInfo() {
        for (String uri : URIS) {
            try (LockManager locks = Latchkey.open(uri)) {
                assertNoSecret(locks.description(), uri + " description");
                try {
                    locks.inspect("k");
                } catch (RuntimeException e) {
                    assertNoSecret(e, uri + " inspect");
                }
            } catch (RuntimeException e) {
                assertNoSecret(e, uri + " open");
            }
        }
    }

    @Test
    void theCommandNeverShowsTheUserInfoVerboseOrNot() {
        for (String uri : URIS) {
            for (String[] args : new String[][] {
                    {"status", "--uri", uri, "k"},
                    {"status", "-v", "--uri", uri, "k"},
                    {"run", "-v", "--uri", uri, "--key", "k", "--", "true"},
                    {"release", "-v", "--uri", uri, "--force", "k"}}) {
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                int status = LatchkeyCommand.commandLine(Map.of(), new PrintWriter(out, true), new PrintWriter(err, true))
                        .execute(args);
                assertThat(status).as("%s: %s", String.join(" ", args), err).isIn(0, 2, 69);
                assertNoSecret(out + "\n" + err, String.join(" ", args));
            }
        }
    }
}
