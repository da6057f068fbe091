package dev.latchkey.cli.check;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the TCK ({@link LiveLockContract}, {@link LiveStoreContract}, {@link LiveStoreFaultContract}) in this JVM with the JUnit
 * Platform Launcher against one live deployment, printing a line per test as it finishes.
 *
 * <p>JUnit instantiates the contract classes itself, so the settings reach them through a static
 * holder that is set only for the duration of {@link #run} — never through a system property or
 * a child's command line, where a URI's credentials could be seen. Runs are serialised per JVM.
 * The verdict is only as good as the TCK: passing means the contract held for this run's
 * interleavings, not that no interleaving can break it.
 */
public final class LiveCheck {
    /** Most lines of a failure message shown; the rest is summarised. */
    private static final int MESSAGE_LINES = 8;
    private static final int LINE_CHARS = 300;

    private static final Object RUNNING = new Object();
    private static volatile Settings current;

    /**
     * What to check and how hard.
     *
     * @param casSkipReason why the compare-and-swap contract is skipped, or null to run it
     */
    public record Settings(String uri, Duration ttl, int casRounds, String casSkipReason) {
        public Settings {
            Objects.requireNonNull(uri, "uri");
            Objects.requireNonNull(ttl, "ttl");
        }
    }

    /** Test counts; a failed or aborted class counts once, as it hides its tests. */
    public record Summary(int passed, int failed, int skipped) {}

    private LiveCheck() {}

    /** The settings of the running check, for the contract classes. */
    static Settings current() {
        Settings s = current;
        if (s == null) throw new IllegalStateException("the live contracts run only inside 'latchkey check'");
        return s;
    }

    public static Summary run(Settings settings, PrintWriter out) {
        synchronized (RUNNING) {
            current = settings;
            try {
                Reporter reporter = new Reporter(out);
                LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectClass(LiveLockContract.class), selectClass(LiveStoreContract.class),
                                selectClass(LiveStoreFaultContract.class))
                        .build(), reporter);
                Summary summary = new Summary(reporter.passed, reporter.failed, reporter.skipped);
                if (summary.passed() + summary.failed() + summary.skipped() == 0) {
                    throw new IllegalStateException("the JUnit launcher ran no TCK test (is junit-jupiter-engine on the class path?)");
                }
                return summary;
            } finally {
                current = null;
            }
        }
    }

    /** Prints each finished test; callbacks come from JUnit's one execution thread. */
    private static final class Reporter implements TestExecutionListener {
        private final PrintWriter out;
        private final Map<String, Long> startedAt = new ConcurrentHashMap<>();
        int passed;
        int failed;
        int skipped;

        Reporter(PrintWriter out) {
            this.out = out;
        }

        @Override
        public void executionStarted(TestIdentifier id) {
            startedAt.put(id.getUniqueId(), System.nanoTime());
        }

        @Override
        public void executionSkipped(TestIdentifier id, String reason) {
            skipped++;
            print("- " + name(id) + "  skipped: " + reason);
        }

        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            // a container that finished well only groups tests; one that did not hides them, so it counts
            if (!id.isTest() && result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) return;
            Long start = startedAt.remove(id.getUniqueId());
            String took = start == null ? "" : String.format(Locale.ROOT, "  %.1f s", (System.nanoTime() - start) / 1e9);
            switch (result.getStatus()) {
                case SUCCESSFUL -> {
                    passed++;
                    print("✓ " + name(id) + took);
                }
                case ABORTED -> {
                    skipped++;
                    print("- " + name(id) + "  skipped: " + skipReason(result));
                }
                case FAILED -> {
                    failed++;
                    StringBuilder sb = new StringBuilder("✗ " + name(id) + took);
                    result.getThrowable().ifPresent(t -> describe(t).forEach(l -> sb.append("\n      ").append(l)));
                    print(sb.toString());
                }
            }
        }

        private void print(String text) {
            out.println(text);
            out.flush(); // one test can take minutes: show progress as it happens
        }
    }

    /** {@code locks singleHolder}, {@code cas racingCreatesHaveExactlyOneWinner}, with a parameterized run's name. */
    private static String name(TestIdentifier id) {
        TestSource source = id.getSource().orElse(null);
        if (source instanceof MethodSource m) {
            String method = m.getMethodName();
            String name = label(m.getClassName()) + " " + method;
            boolean plain = id.getDisplayName().startsWith(method + "(");
            return plain || !id.isTest() ? name : name + " [" + id.getDisplayName() + "]";
        }
        if (source instanceof ClassSource c) return label(c.getClassName()) + " (whole contract)";
        return id.getDisplayName();
    }

    private static String label(String className) {
        if (className.equals(LiveLockContract.class.getName())) return "locks";
        if (className.equals(LiveStoreContract.class.getName())) return "cas";
        if (className.equals(LiveStoreFaultContract.class.getName())) return "faults";
        return className;
    }

    private static String skipReason(TestExecutionResult result) {
        String reason = result.getThrowable().map(Throwable::getMessage).orElse("aborted");
        reason = reason.replaceFirst("^Assumption failed: ", "");
        // the TCK's reason blames the store; here the multi-process tests are left out by the CLI itself
        if (reason.contains("uriForOtherProcesses()")) {
            reason = "multi-process test (needs child JVMs with the TCK's test class path; run lock-tck from Maven for it)";
        }
        return reason;
    }

    /** The first lines of a failure: an assertion's message, else the exception and its first cause. */
    private static List<String> describe(Throwable t) {
        List<String> text = new ArrayList<>(lines(t instanceof AssertionError && t.getMessage() != null
                ? t.getMessage() : oneLine(t)));
        if (!(t instanceof AssertionError) && t.getCause() != null && t.getCause() != t) {
            text.add("caused by " + oneLine(t.getCause()));
        }
        List<String> shown = new ArrayList<>();
        for (String l : text) {
            if (shown.size() == MESSAGE_LINES) {
                shown.add("…(" + (text.size() - MESSAGE_LINES) + " more lines)");
                break;
            }
            shown.add(l.length() <= LINE_CHARS ? l : l.substring(0, LINE_CHARS - 1) + "…");
        }
        return shown;
    }

    private static String oneLine(Throwable t) {
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    private static List<String> lines(String s) {
        return s.lines().map(String::stripTrailing).filter(l -> !l.isBlank()).toList();
    }
}
