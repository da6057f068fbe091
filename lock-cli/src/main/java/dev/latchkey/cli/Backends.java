package dev.latchkey.cli;

import dev.latchkey.Latchkey;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The backends the command can open: those built into its jar, then the plugins of
 * {@code $LATCHKEY_PLUGIN_PATH} (a {@code :}-separated list of jars and directories of jars, in
 * order), then those of {@code ~/.latchkey/plugins/} (each jar there, and each subdirectory with its
 * jars, is one plugin). Plugins are read once, when the command first needs a backend.
 *
 * <p><b>Guarantee.</b> Loading never fails as a whole and never drops anything silently: a plugin
 * that cannot be loaded (a path that does not exist, a file that is not a jar, no provider file, a
 * class that does not link, a provider that throws) is left out entirely and recorded in
 * {@link #problems()} with its path and cause; every other scheme opens as if it were not there.
 * A scheme is served by the first provider found (built-in first, then plugins in the order above);
 * a later provider of the same scheme is recorded as a problem too.
 *
 * <p><b>One class loader per plugin.</b> A backend and its dependencies must see each other, and
 * two plugins must not see each other's dependencies (two Netty or Jackson versions would clash as
 * surely as with the command's own), so each plugin gets one {@link URLClassLoader} over its jars,
 * whose parent is the {@link SharedApiClassLoader}: the JDK and lock-api's API packages, nothing
 * of the command's shaded SDKs. Loaders live as long as the command.
 */
public final class Backends {
    static final String PLUGIN_PATH_ENV = "LATCHKEY_PLUGIN_PATH";
    static final String PLUGIN_FOLDER = ".latchkey/plugins";

    /**
     * The provider serving {@code scheme}, with its one-line description; {@code plugin} is the
     * plugin it came from, or null if built in.
     */
    record Backend(String scheme, LockProvider provider, String description, Path plugin) {
        /** The jar (or class directory) the provider's class was loaded from. */
        String origin() {
            CodeSource src = provider.getClass().getProtectionDomain().getCodeSource();
            if (src == null) return "(built in)";
            try {
                return Path.of(src.getLocation().toURI()).toString(); // decoded: a path with spaces reads as typed
            } catch (URISyntaxException | IllegalArgumentException e) {
                return src.getLocation().toString();
            }
        }
    }

    /** A provider of a plugin with what it answered while the plugin was loaded. */
    private record Found(LockProvider provider, Set<String> schemes, String description) {}

    private final Map<String, Backend> byScheme = new TreeMap<>();
    private final List<String> problems = new ArrayList<>();
    private final String pluginPath;
    private final Path pluginFolder;

    private Backends(String pluginPath, Path pluginFolder) {
        this.pluginPath = pluginPath;
        this.pluginFolder = pluginFolder;
    }

    /** The built-in backends and the plugins named by {@code env} ({@code LATCHKEY_PLUGIN_PATH}, {@code HOME}). */
    static Backends load(Map<String, String> env) {
        String path = env.get(PLUGIN_PATH_ENV);
        Backends b = new Backends(path == null || path.isBlank() ? null : path,
                Path.of(LatchkeyCommand.home(env)).resolve(PLUGIN_FOLDER));
        Latchkey.providers().forEach((scheme, p) -> b.byScheme.put(scheme, new Backend(scheme, p, p.description(), null)));
        SharedApiClassLoader shared = new SharedApiClassLoader(Backends.class.getClassLoader());
        for (Path plugin : b.plugins()) b.loadPlugin(plugin, shared);
        return b;
    }

    /** Every scheme with its provider, sorted by scheme. */
    Collection<Backend> all() {
        return byScheme.values();
    }

    /** One line per plugin (or plugin path entry) that was left out: its path and the cause. */
    List<String> problems() {
        return List.copyOf(problems);
    }

    /** Opens a manager for {@code uri} with the provider of its scheme. */
    public LockManager open(String uri, LockContext context) {
        LockUri parsed = LockUri.parse(uri);
        Backend b = backendOf(parsed);
        LockManager manager = unchecked(() -> inLoaderOf(b, "to open", () -> b.provider().open(parsed, context)));
        return b.plugin() == null ? manager : PluginCalls.wrap(manager, LockManager.class, call -> inLoaderOf(b, "in", call));
    }

    /** The compare-and-swap store under {@code uri}'s managers, if its provider exposes one ({@link LockProvider#openStore}). */
    public Optional<ConditionalStore> openStore(String uri) {
        LockUri parsed = LockUri.parse(uri);
        Backend b = backendOf(parsed);
        return unchecked(() -> inLoaderOf(b, "to open the store of", () -> b.provider().openStore(parsed, LockContext.defaults())));
    }

    private Backend backendOf(LockUri uri) {
        Backend b = byScheme.get(uri.scheme());
        if (b != null) return b;
        throw new UnsupportedLockUriException("no backend for scheme '" + uri.scheme() + "'; installed schemes: "
                + String.join(", ", byScheme.keySet()) + ". Plugins are loaded from $" + PLUGIN_PATH_ENV + " ("
                + (pluginPath == null ? "unset" : pluginPath) + ") and ~/" + PLUGIN_FOLDER + "/ (" + pluginFolder
                + (Files.isDirectory(pluginFolder) ? "" : ", absent") + "): put the backend's jar and its dependencies there"
                + (problems.isEmpty() ? "" : "; " + problems.size() + " plugin problem(s), see 'latchkey backends'"));
    }

    /**
     * A plugin's code runs with its own loader as the thread's context loader, for libraries that
     * look up their own classes or services through it (JDBC drivers, Jackson modules, ...); threads
     * such a library starts meanwhile inherit it. A class the plugin lacks, found missing only now,
     * is its fault, not latchkey's: it is reported as the plugin's, with the loading rule.
     */
    private static <T> T inLoaderOf(Backend b, String what, PluginCalls.Call<T> call) throws Throwable {
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        thread.setContextClassLoader(b.provider().getClass().getClassLoader());
        try {
            return call.call();
        } catch (LinkageError e) {
            if (b.plugin() == null) throw e;
            throw new LockException("plugin " + b.plugin() + " failed " + what + " " + b.scheme() + "://: " + causes(e), e);
        } finally {
            thread.setContextClassLoader(before);
        }
    }

    /** {@code call}, which throws nothing checked. */
    private static <T> T unchecked(PluginCalls.Call<T> call) {
        try {
            return call.call();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The plugins, in order: the entries of the plugin path, then each jar and subdirectory of the folder. */
    private List<Path> plugins() {
        List<Path> plugins = new ArrayList<>();
        if (pluginPath != null) {
            for (String entry : pluginPath.split(File.pathSeparator)) {
                if (entry.isBlank()) continue;
                Path p = Path.of(entry).toAbsolutePath();
                if (Files.exists(p)) plugins.add(p);
                else problems.add("plugin " + p + " (in $" + PLUGIN_PATH_ENV + ") not loaded: no such file or directory");
            }
        }
        if (Files.isDirectory(pluginFolder)) {
            try (Stream<Path> entries = Files.list(pluginFolder)) {
                entries.filter(p -> Files.isDirectory(p) || p.getFileName().toString().endsWith(".jar"))
                        .sorted().forEach(plugins::add);
            } catch (IOException e) {
                problems.add("plugin folder " + pluginFolder + " not read: " + e);
            }
        }
        return plugins;
    }

    /** Registers the providers of one plugin, all or none. */
    private void loadPlugin(Path plugin, ClassLoader shared) {
        List<Found> found = new ArrayList<>();
        try {
            List<Path> jars = jarsOf(plugin);
            URL[] urls = new URL[jars.size()];
            for (int i = 0; i < urls.length; i++) urls[i] = jars.get(i).toUri().toURL();
            ClassLoader loader = new URLClassLoader("latchkey-plugin " + plugin.getFileName(), urls, shared);
            Iterator<LockProvider> it = ServiceLoader.load(LockProvider.class, loader).iterator();
            while (it.hasNext()) {
                LockProvider p = it.next();
                // asked now, so that one that throws (or does not link) is a broken plugin, not a later crash
                found.add(new Found(p, Set.copyOf(p.schemes()), p.description()));
            }
            if (found.isEmpty()) {
                throw new IllegalStateException("no META-INF/services/" + LockProvider.class.getName() + " in "
                        + (jars.size() == 1 ? "it" : "any of its " + jars.size() + " jars"));
            }
        } catch (IOException | ServiceConfigurationError | LinkageError | RuntimeException e) {
            problems.add("plugin " + plugin + " not loaded: " + causes(e));
            return;
        }
        for (Found f : found) {
            for (String scheme : f.schemes()) {
                Backend earlier = byScheme.putIfAbsent(scheme, new Backend(scheme, f.provider(), f.description(), plugin));
                if (earlier != null) {
                    problems.add("plugin " + plugin + ": scheme '" + scheme + "' ignored, already served by "
                            + (earlier.plugin() == null ? "the built-in backend" : "plugin " + earlier.plugin()));
                }
            }
        }
    }

    /** A jar itself, or the jars in a directory; each is opened once so a damaged one is named now. */
    private static List<Path> jarsOf(Path plugin) throws IOException {
        List<Path> jars;
        if (Files.isDirectory(plugin)) {
            try (Stream<Path> files = Files.list(plugin)) {
                jars = files.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted().toList();
            }
            if (jars.isEmpty()) throw new IOException("no .jar file in the directory");
        } else {
            jars = List.of(plugin);
        }
        for (Path jar : jars) {
            try (JarFile ignored = new JarFile(jar.toFile())) {
                // opened: it is a readable jar
            } catch (IOException e) {
                throw new IOException(jar + " is not a readable jar (" + e + ")");
            }
        }
        return jars;
    }

    /** The exception and its causes, on one line; a missing class comes with the rule that explains it. */
    private static String causes(Throwable t) {
        StringBuilder sb = new StringBuilder();
        boolean classMissing = false;
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (sb.length() > 0) sb.append("; caused by ");
            sb.append(c.getClass().getName()).append(c.getMessage() == null ? "" : ": " + c.getMessage().replace('\n', ' '));
            classMissing |= c instanceof NoClassDefFoundError || c instanceof ClassNotFoundException;
        }
        if (classMissing) {
            sb.append(" (a plugin sees only the JDK and lock-api's ").append(String.join(", ", SharedApiClassLoader.SHARED_PACKAGES))
                    .append(" of latchkey: bundle every other dependency in the plugin)");
        }
        return sb.toString();
    }
}
