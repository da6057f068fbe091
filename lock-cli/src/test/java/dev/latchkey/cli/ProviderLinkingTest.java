package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Finding the backends links none of their SDKs: a {@code file://} run instantiates every provider
 * on the class path (ServiceLoader) yet loads no class of the AWS, Azure or Google SDKs, nor of the
 * ClickHouse or PostgreSQL drivers. Run in a JVM of its own, so that no other test has loaded them.
 */
class ProviderLinkingTest {
    private static final Pattern LOADED = Pattern.compile("\\[class,load\\] (\\S+) ");
    private static final List<String> SDK_PACKAGES = List.of(
            "software.amazon.", "com.azure.", "com.google.", "com.clickhouse.", "org.postgresql.");

    @TempDir
    Path dir;

    @Test
    void aFileRunInstantiatesEveryProviderAndLoadsNoBackendSdkClass() throws Exception {
        Path log = dir.resolve("classes.log");
        Path locks = Files.createDirectory(dir.resolve("locks"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-Xshare:off", "-Xlog:class+load=info:file=" + log,
                "-cp", System.getProperty("java.class.path"), LatchkeyCommand.class.getName(),
                "run", "--uri", "file://" + locks, "--key", "k", "--", "true")
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(dir.resolve("out").toFile()).redirectError(dir.resolve("err").toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the run exited (hang guard)").isTrue();
        assertThat(p.exitValue()).as("exit status; stderr: %s", Files.readString(dir.resolve("err"))).isZero();

        List<String> loaded;
        try (var lines = Files.lines(log)) {
            loaded = lines.map(LOADED::matcher).filter(Matcher::find).map(m -> m.group(1)).collect(Collectors.toList());
        }
        // the providers were instantiated, so the absence below is not that of an unread service file
        assertThat(loaded).contains("dev.latchkey.s3.S3LockProvider", "dev.latchkey.azure.AzureLockProvider",
                "dev.latchkey.gcs.GcsLockProvider", "dev.latchkey.clickhouse.ClickHouseLockProvider",
                "dev.latchkey.postgres.PostgresLockProvider");
        assertThat(loaded).filteredOn(c -> SDK_PACKAGES.stream().anyMatch(c::startsWith))
                .as("classes of a backend's SDK or driver loaded by a file:// run").isEmpty();
    }
}
