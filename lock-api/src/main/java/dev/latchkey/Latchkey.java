package dev.latchkey;

import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The entry point: opens a {@link LockManager} for a URI, choosing the backend by scheme among the
 * {@link LockProvider}s on the class path.
 * <pre>{@code
 * try (LockManager locks = Latchkey.open("file:///var/lib/latchkey");
 *      Lease lease = locks.acquire("nightly-export", Duration.ofSeconds(30))) {
 *     export(lease.fencingToken());
 * }
 * }</pre>
 */
public final class Latchkey {
    /** Schemes of the project's own backend modules, to say which jar is missing. */
    private static final Map<String, String> KNOWN_MODULES = Map.of(
            "postgres", "lock-postgres", "postgresql", "lock-postgres",
            "clickhouse", "lock-clickhouse", "s3", "lock-s3", "gs", "lock-gcs",
            "azblob", "lock-azure", "azure", "lock-azure",
            "mem", "lock-api", "file", "lock-api");

    private Latchkey() {}

    /** Opens a manager for {@code uri}, e.g. {@code postgres://app@db/locks} or {@code file:///tmp/locks}. */
    public static LockManager open(String uri) {
        return open(uri, LockContext.defaults());
    }

    public static LockManager open(String uri, LockContext context) {
        LockUri parsed = LockUri.parse(uri);
        LockProvider provider = providers().get(parsed.scheme());
        if (provider == null) {
            String hint = KNOWN_MODULES.containsKey(parsed.scheme())
                    ? " (add the dev.latchkey:" + KNOWN_MODULES.get(parsed.scheme()) + " jar to the class path)"
                    : "";
            throw new UnsupportedLockUriException("no backend for scheme '" + parsed.scheme() + "'" + hint
                    + "; installed schemes: " + String.join(", ", providers().keySet()));
        }
        return provider.open(parsed, context);
    }

    /** Installed providers by scheme, sorted. */
    public static Map<String, LockProvider> providers() {
        Map<String, LockProvider> byScheme = new TreeMap<>();
        for (LockProvider p : ServiceLoader.load(LockProvider.class, classLoader())) {
            for (String s : p.schemes()) byScheme.putIfAbsent(s, p);
        }
        return byScheme;
    }

    /** One line per installed scheme: scheme, description, and the jar it comes from. */
    public static List<String> describeProviders() {
        Map<LockProvider, List<String>> schemes = new LinkedHashMap<>();
        providers().forEach((s, p) -> schemes.computeIfAbsent(p, x -> new ArrayList<>()).add(s));
        List<String> lines = new ArrayList<>();
        schemes.forEach((p, s) -> {
            var src = p.getClass().getProtectionDomain().getCodeSource();
            String where = src == null ? "(built in)" : src.getLocation().getPath();
            lines.add(String.join(", ", s) + "\t" + p.description() + "\t" + where);
        });
        return lines;
    }

    private static ClassLoader classLoader() {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        return cl != null ? cl : Latchkey.class.getClassLoader();
    }
}
