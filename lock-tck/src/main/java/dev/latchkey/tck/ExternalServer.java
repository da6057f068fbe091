package dev.latchkey.tck;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * A real backend server for tests: the URI in an environment variable if one is set (point tests at
 * any existing server), else a server started once per JVM on one of two routes, chosen by
 * {@code -Dlatchkey.test.servers=scripts|containers} (else the environment variable
 * {@code LATCHKEY_TEST_SERVERS}; {@code scripts} by default, whatever the machine offers):
 * <ul>
 *   <li>{@code scripts}: the project's script {@code scripts/<name>.sh start <stateDir>} — which prints
 *       the server's URI as its last line — stopped by {@code scripts/<name>.sh stop <stateDir>} when
 *       the JVM exits;
 *   <li>{@code containers}: the container that the caller of {@link #uri(String, String, Supplier)}
 *       starts through Testcontainers (which must then be on the test classpath), from an image built
 *       locally by {@code scripts/images/build.sh} ({@link #image}), stopped at JVM exit.
 * </ul>
 *
 * <p>Never skips, never falls back: when the chosen route cannot give a server (no script's server,
 * no Docker engine), {@link #uri} throws, so a missing server fails the build.
 */
public final class ExternalServer {
    /** The label of every container the tests start: {@code scripts/test.sh} removes what a killed JVM left. */
    public static final String CONTAINER_LABEL = "dev.latchkey.test";
    private static final Map<String, String> STARTED = new ConcurrentHashMap<>();
    private static final ReentrantLock DOCKER_PROBE = new ReentrantLock();
    private static boolean dockerAnswered; // guarded by DOCKER_PROBE

    private ExternalServer() {}

    /**
     * @param envVar e.g. {@code LATCHKEY_TEST_POSTGRES_URI}
     * @param name   the script's name under {@code scripts/}, without {@code .sh}
     */
    public static String uri(String envVar, String name) {
        String fromEnv = System.getenv(envVar);
        if (fromEnv != null && !fromEnv.isBlank()) return fromEnv.trim();
        return STARTED.computeIfAbsent(name, n -> start(envVar, n));
    }

    /**
     * As {@link #uri(String, String)}, but on the {@code containers} route (and {@code envVar} unset)
     * the server is the one {@code container} starts (once per JVM) and whose URI it returns.
     */
    public static String uri(String envVar, String name, Supplier<String> container) {
        String fromEnv = System.getenv(envVar);
        if (fromEnv != null && !fromEnv.isBlank()) return fromEnv.trim();
        if (!containers()) return uri(envVar, name);
        return STARTED.computeIfAbsent(name + "@docker", n -> container.get());
    }

    /**
     * Whether this run's route is {@code containers}: {@code -Dlatchkey.test.servers}, else
     * {@code LATCHKEY_TEST_SERVERS}, else {@code scripts}. On that route a Docker engine must answer
     * Testcontainers: if none does, this throws rather than let the run take the other route (probed
     * once per JVM; a concurrent caller waits for the first probe's answer).
     *
     * @throws IllegalStateException for a value other than the two routes, or no Docker engine
     */
    public static boolean containers() {
        if (!containersRoute(System.getProperty("latchkey.test.servers"), System.getenv("LATCHKEY_TEST_SERVERS"))) return false;
        DOCKER_PROBE.lock();
        try {
            if (!dockerAnswered) {
                try {
                    dockerAnswered = org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
                } catch (LinkageError e) {
                    throw new IllegalStateException("the containers route needs Testcontainers on this module's test classpath", e);
                }
                if (!dockerAnswered) {
                    throw new IllegalStateException("the containers route: no Docker engine answers (DOCKER_HOST="
                            + System.getenv("DOCKER_HOST") + "). Start one with scripts/install-docker.sh --force and"
                            + " export the DOCKER_HOST it prints, or run with -Dlatchkey.test.servers=scripts");
                }
            }
            return true;
        } finally {
            DOCKER_PROBE.unlock();
        }
    }

    /**
     * Whether the route is {@code containers}: the property's value if set, else the environment's,
     * else {@code scripts}.
     *
     * @throws IllegalStateException for a value other than {@code scripts} or {@code containers}
     */
    static boolean containersRoute(String property, String environment) {
        String route = property != null && !property.isBlank() ? property : environment;
        if (route == null || route.isBlank() || route.trim().equals("scripts")) return false;
        if (route.trim().equals("containers")) return true;
        throw new IllegalStateException("latchkey.test.servers=" + route + ": the routes are scripts and containers");
    }

    /**
     * The image of a test server for the {@code containers} route: {@code -D<property>} if set, else
     * the one {@code scripts/images/build.sh <recipe>} builds from Debian's packages (or finds already
     * built: its tag is a hash of the recipe) and names. Never pulled: no registry is needed.
     */
    public static String image(String property, String recipe) {
        String fromProperty = System.getProperty(property);
        if (fromProperty != null && !fromProperty.isBlank()) return fromProperty.trim();
        return STARTED.computeIfAbsent("image:" + recipe, r -> script("images/build", recipe));
    }

    /** {@code uri} with query parameter {@code name} set to {@code value} (replacing any earlier value). */
    public static String withParam(String uri, String name, String value) {
        int q = uri.indexOf('?');
        String base = q < 0 ? uri : uri.substring(0, q);
        StringBuilder query = new StringBuilder();
        if (q >= 0) {
            for (String pair : uri.substring(q + 1).split("&")) {
                if (pair.isEmpty() || pair.equals(name) || pair.startsWith(name + "=")) continue;
                query.append(query.length() == 0 ? "" : "&").append(pair);
            }
        }
        query.append(query.length() == 0 ? "" : "&").append(name).append('=').append(value);
        return base + "?" + query;
    }

    /** The repository root: {@code -Dlatchkey.repo.root}, else the nearest parent holding {@code scripts/}. */
    public static Path repoRoot() {
        String prop = System.getProperty("latchkey.repo.root");
        if (prop != null && Files.isDirectory(Paths.get(prop, "scripts"))) return Paths.get(prop);
        for (Path p = Paths.get("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("scripts"))) return p;
        }
        throw new IllegalStateException("cannot find the repository's scripts/ folder from " + Paths.get("").toAbsolutePath());
    }

    /** Runs {@code scripts/<name>.sh <args…>} and returns its last line of output. */
    public static String script(String name, String... args) {
        Path script = repoRoot().resolve("scripts").resolve(name + ".sh");
        if (!Files.isRegularFile(script)) throw new IllegalStateException("missing " + script);
        try {
            String prefix = "latchkey-" + name.replace('/', '-');
            Path log = Files.createTempFile(prefix, ".log");
            Path stdout = Files.createTempFile(prefix, ".out");
            List<String> cmd = new java.util.ArrayList<>(List.of("bash", script.toString()));
            cmd.addAll(List.of(args));
            // stdout goes to a file, not a pipe: a server the script leaves running with the pipe
            // inherited would otherwise keep the read open forever and hang the test run
            Process p = new ProcessBuilder(cmd)
                    .redirectOutput(stdout.toFile())
                    .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            boolean finished = p.waitFor(10, TimeUnit.MINUTES);
            if (!finished) p.destroyForcibly();
            String out = Files.readString(stdout, StandardCharsets.UTF_8);
            Files.deleteIfExists(stdout);
            if (!finished || p.exitValue() != 0) {
                throw new IllegalStateException(script + " " + String.join(" ", args) + " failed (exit "
                        + (finished ? p.exitValue() : "timeout") + "):\n" + out + Files.readString(log));
            }
            String[] lines = out.strip().split("\n");
            return lines[lines.length - 1].trim();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + script, e);
        }
    }

    private static String start(String envVar, String name) {
        try {
            Path state = Files.createTempDirectory("latchkey-" + name + "-");
            String uri;
            try {
                uri = script(name, "start", state.toString());
            } catch (IllegalStateException e) {
                throw new IllegalStateException("no " + name + " server: set " + envVar
                        + " to an existing one, or make scripts/" + name + ".sh start work (run scripts/install.sh first)", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    script(name, "stop", state.toString());
                } catch (RuntimeException ignored) {
                    // the JVM is exiting; the script's own cleanup is best effort
                }
            }, "stop-" + name));
            return uri;
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a state directory for " + name, e);
        }
    }
}
