package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin through the shaded jar, as CI runs an out-of-tree backend: {@code LATCHKEY_PLUGIN_PATH}
 * naming a directory that holds the backend's jar and its dependency's jar (its own copy of a
 * Jackson class the shaded jar also ships), then {@code run} on the plugin's scheme and {@code backends}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // hang guard only
class PluginJarIT {
    @TempDir
    Path dir;

    @Test
    void theShadedJarRunsACommandUnderAPluginBackend() throws Exception {
        Path plugin = Files.createDirectories(dir.resolve("plugin"));
        PluginJars.jar(plugin.resolve("delta-backend.jar"), PluginJars.provider("test.delta", "delta", "delta's copy"),
                PluginJars.jsonFactoryCopy("delta's copy"));
        PluginJars.jar(plugin.resolve("fake-jackson-core.jar"), PluginJars.jsonFactoryCopy("delta's copy"), Map.of());
        Map<String, String> env = new HashMap<>(Map.of(Backends.PLUGIN_PATH_ENV, plugin.toString(), "HOME", dir.toString()));

        JarCli.Result run = JarCli.start(dir, env, "run", "--uri", "delta://ci", "--key", "k", "--", "echo", "hi").await();
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("hi\n");
        assertThat(run.err()).isEmpty();

        JarCli.Result backends = JarCli.start(dir, env, "backends").await();
        assertThat(backends.status()).as(backends.err()).isZero();
        assertThat(backends.out()).contains("delta                  test plugin; JsonFactory says delta's copy\n"
                + "                         from " + plugin.resolve("delta-backend.jar") + " (plugin " + plugin + ")\n");
        // the shaded jar's own Jackson still serves the command: status --json of the built-in file://
        JarCli.Result status = JarCli.start(dir, env, "status", "--uri", "file://" + dir.resolve("locks"), "--json", "k").await();
        assertThat(status.status()).as(status.err()).isZero();
        assertThat(status.out()).startsWith("{\"key\":\"k\",\"held\":false");
    }
}
