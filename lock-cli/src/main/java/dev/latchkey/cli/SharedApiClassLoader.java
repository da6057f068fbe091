package dev.latchkey.cli;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The parent of every plugin's class loader: it answers exactly the classes a plugin shares with
 * the command — the JDK, and the three packages of lock-api a backend is written against
 * ({@code dev.latchkey}, {@code dev.latchkey.spi}, {@code dev.latchkey.engine}) — and nothing
 * else. Every other class a plugin uses (its SDK, Jackson, Netty, Guava, SLF4J, ...) comes from its
 * own jars, whatever version the command's shaded jar ships; so the two never clash.
 *
 * <p>The API packages must be shared, not copied: a plugin's {@code LockProvider} and the managers
 * it returns are used by the command as the command's own types. The built-in backends in lock-api
 * ({@code dev.latchkey.file}, {@code dev.latchkey.mem}) and the command's own packages are not
 * visible. No resource of the command's jar is visible either (only the JDK's), so a plugin's
 * {@code ServiceLoader} finds its own providers, never the command's.
 */
final class SharedApiClassLoader extends ClassLoader {
    /** The lock-api packages a backend compiles against (see docs/plugins.md). */
    static final List<String> SHARED_PACKAGES = List.of("dev.latchkey", "dev.latchkey.spi", "dev.latchkey.engine");

    /** Packages of the JDK's own modules (java.*, javax.*, jdk.*, sun.*, ...), wherever the JDK defines them. */
    private static final Set<String> JDK_PACKAGES = ModuleLayer.boot().modules().stream()
            .flatMap(m -> m.getPackages().stream())
            .collect(Collectors.toUnmodifiableSet());

    static {
        registerAsParallelCapable();
    }

    private final ClassLoader command;

    /** @param command the loader of the command's own classes (the shaded jar) */
    SharedApiClassLoader(ClassLoader command) {
        // the platform loader as parent serves the JDK's resources; classes are routed below
        super("latchkey-shared-api", ClassLoader.getPlatformClassLoader());
        this.command = command;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        String pkg = packageOf(name);
        if (SHARED_PACKAGES.contains(pkg)) return command.loadClass(name);
        // the system loader reaches every JDK module, also the few the JDK defines to the application loader
        if (JDK_PACKAGES.contains(pkg)) return ClassLoader.getSystemClassLoader().loadClass(name);
        throw new ClassNotFoundException(name); // the plugin's loader then looks in the plugin's jars
    }

    private static String packageOf(String className) {
        int dot = className.lastIndexOf('.');
        return dot < 0 ? "" : className.substring(0, dot);
    }
}
