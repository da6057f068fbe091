package dev.latchkey.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.spi.LockProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Real plugin jars for the tests, compiled here with {@code javax.tools} against lock-api alone (as
 * a backend's build sees it: lock-api at provided scope), so nothing of the command's class path
 * leaks into them.
 *
 * <p>{@link #provider} is a whole backend ({@code SCHEME://NAME}: the lease engine over an
 * in-memory store of its own), whose description reports which {@code JsonFactory} it sees: the
 * plugin bundles its own {@code com.fasterxml.jackson.core.JsonFactory}, a class the command also
 * ships (real Jackson) with other content. Linked against the command's copy instead, the provider
 * would fail with {@code NoSuchMethodError} ({@code who()} exists only in the plugin's copy).
 */
final class PluginJars {
    private PluginJars() {}

    /** Sources of a backend serving {@code scheme}, in package {@code pkg}; its JsonFactory copy answers {@code who}. */
    static Map<String, String> provider(String pkg, String scheme, String who) {
        String cls = pkg + ".TinyProvider";
        return Map.of(
                pkg.replace('.', '/') + "/TinyProvider.java", """
                        package %1$s;

                        import dev.latchkey.LockManager;
                        import dev.latchkey.engine.ConditionalStoreLockManager;
                        import dev.latchkey.spi.ConditionalStore;
                        import dev.latchkey.spi.LockContext;
                        import dev.latchkey.spi.LockProvider;
                        import dev.latchkey.spi.LockUri;
                        import dev.latchkey.spi.StoredRecord;
                        import java.time.Duration;
                        import java.util.List;
                        import java.util.Map;
                        import java.util.Optional;
                        import java.util.Set;
                        import java.util.concurrent.ConcurrentHashMap;

                        public final class TinyProvider implements LockProvider {
                            private static final Map<String, Store> STORES = new ConcurrentHashMap<>();

                            public Set<String> schemes() { return Set.of("%2$s"); }

                            public String description() {
                                return "test plugin; JsonFactory says " + com.fasterxml.jackson.core.JsonFactory.who();
                            }

                            public LockManager open(LockUri uri, LockContext context) {
                                // lazy://: a class first needed here, not while the plugin loads
                                String name = uri.host().equals("lazy") ? LazyDependency.name() : uri.host();
                                return new ConditionalStoreLockManager(STORES.computeIfAbsent(name, Store::new), context, Set.of());
                            }

                            private static final class Store implements ConditionalStore {
                                private record Rec(byte[] data, String version, long writtenNanos) {}
                                private final String name;
                                private final Map<String, Rec> records = new ConcurrentHashMap<>();
                                private long versions;

                                Store(String name) { this.name = name; }

                                public synchronized Optional<StoredRecord> read(String key) {
                                    // SCHEME://late: a class first needed after open, by the first read
                                    if (name.equals("late")) LazyDependency.name();
                                    Rec r = records.get(key);
                                    return r == null ? Optional.empty()
                                            : Optional.of(new StoredRecord(r.data(), r.version(), Duration.ofNanos(System.nanoTime() - r.writtenNanos())));
                                }
                                public synchronized Optional<String> create(String key, byte[] data) {
                                    if (records.containsKey(key)) return Optional.empty();
                                    return Optional.of(put(key, data));
                                }
                                public synchronized Optional<String> replace(String key, String expected, byte[] data) {
                                    Rec r = records.get(key);
                                    if (r == null || !r.version().equals(expected)) return Optional.empty();
                                    return Optional.of(put(key, data));
                                }
                                public synchronized boolean delete(String key, String expected) {
                                    Rec r = records.get(key);
                                    return r != null && r.version().equals(expected) && records.remove(key, r);
                                }
                                public synchronized List<String> list(String prefix) {
                                    return records.keySet().stream().filter(k -> k.startsWith(prefix)).toList();
                                }
                                public String describe() { return "%2$s://" + name; }
                                public void close() {}

                                private String put(String key, byte[] data) {
                                    String version = Long.toString(++versions);
                                    records.put(key, new Rec(data.clone(), version, System.nanoTime()));
                                    return version;
                                }
                            }
                        }
                        """.formatted(pkg, scheme),
                lazyDependency(pkg), "package %s; final class LazyDependency { static String name() { return \"lazy\"; } }".formatted(pkg),
                "META-INF/services/" + LockProvider.class.getName(), cls + "\n");
    }

    /** The entry of {@link #provider}'s sources that its {@code open} of {@code SCHEME://lazy} needs, and nothing before. */
    static String lazyDependency(String pkg) {
        return pkg.replace('.', '/') + "/LazyDependency.java";
    }

    /** The plugin's own copy of a class the command ships too, with other content. */
    static Map<String, String> jsonFactoryCopy(String who) {
        return Map.of("com/fasterxml/jackson/core/JsonFactory.java", """
                package com.fasterxml.jackson.core;

                public final class JsonFactory {
                    public static String who() { return "%s"; }
                }
                """.formatted(who));
    }

    /**
     * Compiles the {@code .java} entries of {@code sources} (with {@code alsoCompile} on the source
     * path, not in the jar) against lock-api and writes a jar of the classes and the other entries.
     */
    static Path jar(Path jar, Map<String, String> sources, Map<String, String> alsoCompile) throws IOException {
        Path work = Files.createTempDirectory("latchkey-plugin-build-");
        try {
            Path classes = compile(work, sources, alsoCompile);
            try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os)) {
                try (Stream<Path> files = Files.walk(classes)) {
                    for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                        add(out, classes.relativize(f).toString(), Files.readAllBytes(f));
                    }
                }
                for (Map.Entry<String, String> e : sources.entrySet()) {
                    if (!e.getKey().endsWith(".java")) add(out, e.getKey(), e.getValue().getBytes(StandardCharsets.UTF_8));
                }
            }
            return jar;
        } finally {
            try (Stream<Path> files = Files.walk(work)) {
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) Files.delete(f);
            }
        }
    }

    /** The classes of the {@code .java} entries of {@code sources}, compiled in {@code work}. */
    private static Path compile(Path work, Map<String, String> sources, Map<String, String> alsoCompile) throws IOException {
        Path src = work.resolve("src");
        Path classes = Files.createDirectories(work.resolve("classes"));
        List<String> args = new ArrayList<>(List.of("-d", classes.toString(), "-classpath", lockApi(),
                "-sourcepath", src.toString(), "-implicit:none", "--release", "17"));
        Map<String, String> all = new HashMap<>(sources);
        all.putAll(alsoCompile);
        for (Map.Entry<String, String> e : all.entrySet()) {
            Path f = src.resolve(e.getKey());
            Files.createDirectories(f.getParent());
            Files.writeString(f, e.getValue());
            if (sources.containsKey(e.getKey()) && e.getKey().endsWith(".java")) args.add(f.toString());
        }
        if (args.stream().anyMatch(a -> a.endsWith(".java"))) {
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
            int status = javac.run(null, diagnostics, diagnostics, args.toArray(String[]::new));
            assertThat(status).as("javac of the test plugin: %s", diagnostics).isZero();
        }
        return classes;
    }

    private static void add(JarOutputStream out, String name, byte[] data) throws IOException {
        out.putNextEntry(new JarEntry(name.replace('\\', '/')));
        out.write(data);
        out.closeEntry();
    }

    /** Where lock-api's classes are (its jar, or target/classes in the reactor). */
    private static String lockApi() {
        try {
            return Path.of(LockProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
