package dev.latchkey.cli;

import static dev.latchkey.cli.InProcessCli.latchkey;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backend plugins in-process, with real jars compiled by {@link PluginJars}: a plugin's classes come
 * from its own jars (its own copy of a class the command ships too), one loader per plugin; the
 * plugin folder; the places named by the unknown-scheme error; broken plugins named with path and
 * cause without taking the other schemes down.
 */
class PluginTest {
    @TempDir
    Path dir;

    /** A self-contained plugin jar: provider plus its own JsonFactory copy. */
    private Path bundledPlugin(Path jar, String scheme, String who) throws IOException {
        Map<String, String> all = new HashMap<>(PluginJars.provider("test." + scheme, scheme, who));
        all.putAll(PluginJars.jsonFactoryCopy(who));
        return PluginJars.jar(jar, all, Map.of());
    }

    /** A plugin as a directory: the backend's jar and its dependency's jar (the JsonFactory copy), as Maven would lay them out. */
    private Path directoryPlugin(Path folder, String scheme, String who) throws IOException {
        Files.createDirectories(folder);
        PluginJars.jar(folder.resolve(scheme + "-backend.jar"), PluginJars.provider("test." + scheme, scheme, who),
                PluginJars.jsonFactoryCopy(who));
        PluginJars.jar(folder.resolve("fake-jackson-core.jar"), PluginJars.jsonFactoryCopy(who), Map.of());
        return folder;
    }

    private Map<String, String> env(String pluginPath) {
        return pluginPath == null ? Map.of("HOME", dir.toString())
                : Map.of("HOME", dir.toString(), Backends.PLUGIN_PATH_ENV, pluginPath);
    }

    @Test
    void eachPluginSeesItsOwnCopyOfAClassTheCommandAlsoShips() throws Exception {
        Path a = bundledPlugin(dir.resolve("alpha.jar"), "alpha", "alpha's copy");
        Path b = directoryPlugin(dir.resolve("beta"), "beta", "beta's copy");

        InProcessCli.Result r = latchkey(env(a + ":" + b), "backends");

        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("alpha                  test plugin; JsonFactory says alpha's copy\n"
                + "                         from " + a + " (plugin)\n");
        assertThat(r.out()).contains("beta                   test plugin; JsonFactory says beta's copy\n"
                + "                         from " + b.resolve("beta-backend.jar") + " (plugin " + b + ")\n");
        assertThat(r.out()).contains("mem ").contains("file ").contains("s3 "); // the built-ins are still there
        // the command's own JsonFactory is real Jackson, from the command's class path, untouched by the plugins
        assertThat(new JsonFactory().getFormatName()).isEqualTo("JSON");
        assertThat(JsonFactory.class.getProtectionDomain().getCodeSource().getLocation().getPath())
                .doesNotContain(dir.toString());
    }

    @Test
    void aPluginBackendLocks() throws Exception {
        Path a = bundledPlugin(dir.resolve("alpha.jar"), "alpha", "alpha's copy");
        Map<String, String> env = env(a.toString());

        InProcessCli.Result run = latchkey(env, "run", "--uri", "alpha://one", "--key", "k", "--", "true");
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.err()).isEmpty();
        InProcessCli.Result status = latchkey(env, "status", "--uri", "alpha://one", "--json", "k");
        assertThat(status.status()).as(status.err()).isZero();
        assertThat(status.out()).contains("\"held\":false");
    }

    @Test
    void benchMeasuresAPluginBackend() throws Exception {
        Path a = bundledPlugin(dir.resolve("alpha.jar"), "alpha", "alpha's copy");

        InProcessCli.Result r = latchkey(env(a.toString()), "bench", "alpha://bench", "--threads", "1", "--keys", "1",
                "--duration", "50ms", "--warmup", "0s");

        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("latchkey bench alpha://bench").contains("acquire+release, uncontended");
    }

    @Test
    void aClassAPluginLacksFoundOnlyWhenItOpensIsThePluginsError() throws Exception {
        Map<String, String> sources = new HashMap<>(PluginJars.provider("test.lazy", "lazy", "lazy's copy"));
        sources.putAll(PluginJars.jsonFactoryCopy("lazy's copy"));
        String dependency = PluginJars.lazyDependency("test.lazy");
        Path jar = PluginJars.jar(dir.resolve("lazy.jar"), withOut(sources, dependency),
                Map.of(dependency, sources.get(dependency)));

        InProcessCli.Result ok = latchkey(env(jar.toString()), "status", "--uri", "lazy://fine", "k");
        assertThat(ok.status()).as(ok.err()).isZero();
        InProcessCli.Result r = latchkey(env(jar.toString()), "status", "--uri", "lazy://lazy", "k");
        assertThat(r.status()).isEqualTo(ExitCodes.FAILURE);
        assertThat(r.errLine()).isEqualTo("latchkey: plugin " + jar + " failed to open lazy://: java.lang.NoClassDefFoundError: "
                + "test/lazy/LazyDependency; caused by java.lang.ClassNotFoundException: test.lazy.LazyDependency "
                + "(a plugin sees only the JDK and lock-api's dev.latchkey, dev.latchkey.spi, dev.latchkey.engine of latchkey: "
                + "bundle every other dependency in the plugin)");

        // opened fine, the class is first needed by the manager's first read: still the plugin's error
        InProcessCli.Result late = latchkey(env(jar.toString()), "status", "--uri", "lazy://late", "k");
        assertThat(late.status()).as(late.err()).isEqualTo(ExitCodes.FAILURE);
        assertThat(late.errLine()).startsWith("latchkey: plugin " + jar + " failed in lazy://: java.lang.NoClassDefFoundError: "
                + "test/lazy/LazyDependency").contains("bundle every other dependency in the plugin");
    }

    private static Map<String, String> withOut(Map<String, String> m, String key) {
        Map<String, String> copy = new HashMap<>(m);
        copy.remove(key);
        return copy;
    }

    @Test
    void thePluginFolderHoldsJarsAndDirectoriesOfJars() throws Exception {
        Path folder = dir.resolve(Backends.PLUGIN_FOLDER);
        Files.createDirectories(folder);
        Path a = bundledPlugin(folder.resolve("alpha.jar"), "alpha", "alpha's copy");
        Path b = directoryPlugin(folder.resolve("beta"), "beta", "beta's copy");

        InProcessCli.Result r = latchkey(env(null), "backends");

        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).contains("from " + a + " (plugin)")
                .contains("from " + b.resolve("beta-backend.jar") + " (plugin " + b + ")");
    }

    @Test
    void theUnknownSchemeErrorSaysWherePluginsGo() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("plugins-here"));
        Files.write(empty.resolve("x.jar"), new byte[0]); // so the entry is a broken plugin, counted in the message

        InProcessCli.Result r = latchkey(env(empty.toString()), "status", "--uri", "redis://h/0", "k");

        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        String last = r.err().strip().lines().reduce((x, y) -> y).orElseThrow();
        assertThat(last).startsWith("latchkey: no backend for scheme 'redis'; installed schemes: ")
                .contains("$LATCHKEY_PLUGIN_PATH (" + empty + ")")
                .contains("~/.latchkey/plugins/ (" + dir.resolve(".latchkey/plugins") + ", absent)")
                .contains("put the backend's jar and its dependencies there")
                .contains("1 plugin problem(s), see 'latchkey backends'");
    }

    @Test
    void brokenPluginsAreNamedWithTheirCauseAndTheOtherSchemesStillWork() throws Exception {
        Path good = bundledPlugin(dir.resolve("alpha.jar"), "alpha", "alpha's copy");
        Path notAJar = Files.writeString(dir.resolve("garbage.jar"), "this is not a zip file");
        Path missingClass = PluginJars.jar(dir.resolve("missing-class.jar"),
                Map.of("META-INF/services/dev.latchkey.spi.LockProvider", "test.missing.NoSuchProvider\n"), Map.of());
        Path noProvider = PluginJars.jar(dir.resolve("no-provider.jar"), PluginJars.jsonFactoryCopy("x"), Map.of());
        // linked against a JsonFactory.who() the plugin does not bundle: the command's real Jackson has none
        Path unlinkable = PluginJars.jar(dir.resolve("unlinkable.jar"),
                PluginJars.provider("test.gamma", "gamma", "gamma's copy"), PluginJars.jsonFactoryCopy("gamma's copy"));
        Path absent = dir.resolve("absent.jar");
        String path = String.join(":", notAJar.toString(), missingClass.toString(), noProvider.toString(),
                unlinkable.toString(), absent.toString(), good.toString());

        InProcessCli.Result r = latchkey(env(path), "backends");

        assertThat(r.status()).isEqualTo(ExitCodes.FAILURE);
        assertThat(r.out()).contains("alpha ").contains("mem ").doesNotContain("gamma");
        assertThat(r.err().lines()).containsExactly(
                "latchkey: plugin " + absent + " (in $LATCHKEY_PLUGIN_PATH) not loaded: no such file or directory",
                "latchkey: plugin " + notAJar + " not loaded: java.io.IOException: " + notAJar
                        + " is not a readable jar (java.util.zip.ZipException: zip END header not found)",
                "latchkey: plugin " + missingClass + " not loaded: java.util.ServiceConfigurationError: "
                        + "dev.latchkey.spi.LockProvider: Provider test.missing.NoSuchProvider not found",
                "latchkey: plugin " + noProvider + " not loaded: java.lang.IllegalStateException: "
                        + "no META-INF/services/dev.latchkey.spi.LockProvider in it",
                "latchkey: plugin " + unlinkable + " not loaded: java.lang.NoClassDefFoundError: "
                        + "com/fasterxml/jackson/core/JsonFactory; caused by java.lang.ClassNotFoundException: "
                        + "com.fasterxml.jackson.core.JsonFactory (a plugin sees only the JDK and lock-api's "
                        + "dev.latchkey, dev.latchkey.spi, dev.latchkey.engine of latchkey: bundle every other dependency in the plugin)");

        // another scheme still opens, and the broken plugins are still said, not swallowed
        InProcessCli.Result mem = latchkey(env(path), "status", "--uri", "mem://plugins", "k");
        assertThat(mem.status()).as(mem.err()).isZero();
        assertThat(mem.err().lines()).hasSize(5).allMatch(l -> l.startsWith("latchkey: plugin "));
        InProcessCli.Result alpha = latchkey(env(path), "status", "--uri", "alpha://x", "k");
        assertThat(alpha.status()).as(alpha.err()).isZero();
    }
}
