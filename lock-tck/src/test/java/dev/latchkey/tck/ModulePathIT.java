package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API, the kit and the embedded backends work from the module path, as a modular application
 * uses them: a small module that {@code requires dev.latchkey.api} (a named module: lock-api's
 * {@code module-info}) and {@code dev.latchkey.tck} (this jar) is compiled here and run in a JVM of
 * its own with nothing on the class path. It opens {@code mem://} and {@code file://} by URI, so the
 * backends are found through the module's {@code provides}, and runs 4 threads × 25 sections of one
 * key through the kit's {@link CriticalSectionChecker}: no overlap, no lost update, tokens in order.
 * It also sees that {@code dev.latchkey.file} is not exported.
 */
class ModulePathIT {
    private static final String MAIN = """
            package dev.latchkey.modulecheck;

            import dev.latchkey.Latchkey;
            import dev.latchkey.Lease;
            import dev.latchkey.LeaseOptions;
            import dev.latchkey.LockManager;
            import dev.latchkey.tck.CriticalSectionChecker;
            import java.time.Duration;
            import java.util.ArrayList;
            import java.util.List;

            public final class Main {
                public static void main(String[] args) throws Exception {
                    Module api = Latchkey.class.getModule();
                    System.out.println("api=" + api.getName() + " named=" + api.isNamed());
                    System.out.println("tck=" + CriticalSectionChecker.class.getModule().getName());
                    System.out.println("exports dev.latchkey.file=" + api.isExported("dev.latchkey.file"));
                    for (String uri : List.of("mem://modulepath", "file://" + args[0])) {
                        CriticalSectionChecker checker = new CriticalSectionChecker();
                        try (LockManager locks = Latchkey.open(uri)) {
                            List<Thread> threads = new ArrayList<>();
                            for (int t = 0; t < 4; t++) {
                                Thread thread = new Thread(() -> {
                                    for (int i = 0; i < 25; i++) {
                                        try (Lease lease = locks.acquire("one-key", Duration.ofSeconds(60),
                                                LeaseOptions.ttl(Duration.ofSeconds(60)))) {
                                            checker.section(lease.fencingToken());
                                        }
                                    }
                                });
                                thread.start();
                                threads.add(thread);
                            }
                            for (Thread t : threads) t.join();
                        }
                        System.out.println(uri.substring(0, uri.indexOf(':')) + ": " + checker.summary()
                                + " problems=" + checker.problems(true));
                    }
                }
            }
            """;

    @Test
    void kitAndEmbeddedBackendsRunFromTheModulePath(@TempDir Path dir) throws Exception {
        String modulePath = location(Latchkey.class) + File.pathSeparator + tckJar();
        Path src = dir.resolve("src/dev.latchkey.modulecheck");
        Path main = src.resolve("dev/latchkey/modulecheck/Main.java");
        Files.createDirectories(main.getParent());
        Files.writeString(src.resolve("module-info.java"),
                "module dev.latchkey.modulecheck { requires dev.latchkey.api; requires dev.latchkey.tck; }\n");
        Files.writeString(main, MAIN);
        Path classes = dir.resolve("classes");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int compiled = javac.run(null, null, null, "--release", "17", "--module-path", modulePath, "-d", classes.toString(),
                src.resolve("module-info.java").toString(), main.toString());
        assertThat(compiled).as("javac of the module on the module path").isZero();

        Path locks = Files.createDirectories(dir.resolve("locks"));
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "--module-path", modulePath + File.pathSeparator + classes,
                "-m", "dev.latchkey.modulecheck/dev.latchkey.modulecheck.Main", locks.toString()));
        Path out = dir.resolve("out.txt");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).as("the module's JVM ended").isTrue();
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(String.join("\n", lines)).isZero();
        assertThat(lines).containsExactly(
                "api=dev.latchkey.api named=true",
                "tck=dev.latchkey.tck",
                "exports dev.latchkey.file=false",
                "mem: sections=100, overlaps=0, counter=100, tokenOrderViolations=0 problems=[]",
                "file: sections=100, overlaps=0, counter=100, tokenOrderViolations=0 problems=[]");
    }

    /** lock-api's jar or classes directory: either holds its module-info.class. */
    private static String location(Class<?> c) throws URISyntaxException {
        return Paths.get(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    /** This module's jar (failsafe runs after package): an automatic module needs a jar, not a directory. */
    private static String tckJar() {
        String jar = System.getProperty("latchkey.tck.jar");
        assertThat(jar).as("-Dlatchkey.tck.jar (set by lock-tck's failsafe configuration)").isNotNull();
        assertThat(Path.of(jar)).isRegularFile();
        return jar;
    }
}
