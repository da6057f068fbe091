package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The child JVMs of the multi-process tests get the JVM arguments they are given — by default this
 * JVM's {@code latchkey.*} (and TLS, proxy) properties — and nothing else, through an owner-only
 * argument file rather than their command line: a holder process on {@code tck-gated://}
 * ({@link PropertyGatedProvider}) acquires only if its property arrived intact.
 */
class ChildJvmArgumentsTest {
    private static final String URI = "tck-gated://child-jvm";
    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void aChildGetsExactlyTheArgumentsItIsGivenAndNotOnItsCommandLine(@TempDir Path work) throws Exception {
        assertThat(System.getProperty(PropertyGatedProvider.PROPERTY)).as("the property in this JVM").isNull();
        Path none = Files.createDirectory(work.resolve("none"));
        assertThatThrownBy(() -> MultiProcessContention.startHolder(URI, "none", TTL, none, List.of()))
                .as("a child given no arguments")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(PropertyGatedProvider.PROPERTY + " is not set");

        Path dir = Files.createDirectory(work.resolve("given"));
        MultiProcessContention.Holder holder = MultiProcessContention.startHolder(URI, "given", TTL, dir,
                List.of("-D" + PropertyGatedProvider.PROPERTY + "=" + PropertyGatedProvider.VALUE));
        try {
            String commandLine = holder.process().info().commandLine().orElse("");
            assertThat(commandLine).as("the child's command line").contains("@").doesNotContain(PropertyGatedProvider.PROPERTY);
            try (Stream<Path> files = Files.list(dir)) {
                Path args = files.filter(f -> f.getFileName().toString().endsWith(".args")).findFirst().orElseThrow();
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(args))).isEqualTo("rw-------");
            }
        } finally {
            holder.process().destroyForcibly().waitFor();
        }
    }

    @Test
    void byDefaultAChildGetsThisJvmsLatchkeyProperties(@TempDir Path work) throws Exception {
        System.setProperty(PropertyGatedProvider.PROPERTY, PropertyGatedProvider.VALUE);
        try {
            assertThat(MultiProcessContention.forwardedSystemProperties())
                    .contains("-D" + PropertyGatedProvider.PROPERTY + "=" + PropertyGatedProvider.VALUE)
                    .noneMatch(a -> a.startsWith("-Djava.home=") || a.startsWith("-Duser.dir="));
            MultiProcessContention.Holder holder = MultiProcessContention.startHolder(URI, "default", TTL, work);
            holder.process().destroyForcibly().waitFor();
        } finally {
            System.clearProperty(PropertyGatedProvider.PROPERTY);
        }
    }

    @Test
    void anArgumentFileLineHoldsOneArgumentWhateverItContains() {
        assertThat(MultiProcessContention.argFileQuoted("-Da=b \"c\" \\d")).isEqualTo("\"-Da=b \\\"c\\\" \\\\d\"");
        assertThatThrownBy(() -> MultiProcessContention.argFileQuoted("-Dsecret=hunter2\nx"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-Dsecret=")
                .hasMessageNotContaining("hunter2");
    }
}
