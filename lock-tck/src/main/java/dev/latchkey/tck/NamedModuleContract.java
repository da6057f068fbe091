package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockProvider;
import java.lang.module.Configuration;
import java.lang.module.ModuleFinder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A jar with a {@code module-info} works on the module path: the module resolves against its own
 * runtime dependencies alone — none of the tests' — and, for a backend, {@link ServiceLoader} finds
 * its {@link LockProvider} there through the module's {@code provides} (a named module's
 * {@code META-INF/services} is ignored). Resolving catches a {@code requires} of a module the
 * dependencies do not bring, two jars that export one package, and a missing {@code provides}; the
 * class path, where the tests run, would hide all three.
 *
 * <p>The module is this project's {@code target/classes}; its dependencies are listed in
 * {@code target/runtime-classpath.txt} (the root POM's {@code named-module} profile writes it with
 * {@code dependency:build-classpath}, runtime scope, for every module with a {@code module-info}).
 */
public abstract class NamedModuleContract {

    /** The module's name, as its {@code module-info} declares it. */
    protected abstract String moduleName();

    /** The provider the module declares, or null for a module that is not a backend. */
    protected abstract String providerClassName();

    @Test
    void resolvesOnTheModulePathFromItsRuntimeDependencies() throws Exception {
        Path target = Path.of("target");
        List<Path> modulePath = new ArrayList<>();
        modulePath.add(target.resolve("classes"));
        for (String entry : Files.readString(target.resolve("runtime-classpath.txt"), StandardCharsets.UTF_8).strip().split(java.io.File.pathSeparator)) {
            if (!entry.isEmpty()) modulePath.add(Path.of(entry));
        }
        Configuration graph = ModuleLayer.boot().configuration()
                .resolveAndBind(ModuleFinder.of(modulePath.toArray(Path[]::new)), ModuleFinder.of(), Set.of(moduleName()));
        assertThat(graph.findModule(moduleName())).as("the module %s", moduleName()).isPresent();
        assertThat(graph.findModule(moduleName()).orElseThrow().reference().descriptor().isAutomatic())
                .as("%s has a module-info (not an automatic module)", moduleName()).isFalse();

        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(graph, ClassLoader.getPlatformClassLoader());
        List<String> providers = new ArrayList<>();
        Class<?> spi = layer.findLoader(moduleName()).loadClass(LockProvider.class.getName());
        for (ServiceLoader.Provider<?> provider : ServiceLoader.load(layer, spi).stream().toList()) {
            if (provider.type().getModule().getLayer() == layer
                    && provider.type().getModule().getName().equals(moduleName())) {
                providers.add(provider.type().getName());
            }
        }
        if (providerClassName() == null) {
            assertThat(providers).as("LockProviders of %s", moduleName()).isEmpty();
        } else {
            assertThat(providers).as("LockProviders of %s found on the module path", moduleName()).containsExactly(providerClassName());
        }
    }
}
