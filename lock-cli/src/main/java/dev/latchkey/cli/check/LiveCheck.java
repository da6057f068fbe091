package dev.latchkey.cli.check;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.latchkey.cli.Backends;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the TCK ({@link LiveLockContract}, {@link LiveStoreContract}, {@link LiveStoreFaultContract}) and the
 * command's job containment ({@link LiveJobContainmentContract}) in this JVM with the JUnit
 * Platform Launcher against one live deployment, printing a line per test as it finishes.
 *
 * <p>JUnit instantiates the contract classes itself, so the settings reach them through a static
 * holder that is set only for the duration of {@link #run} — never through a system property or
 * a child's command line, where a URI's credentials could be seen. Runs are serialised per JVM: the
 * holder has room for one run's settings, so a second run waits (uninterruptibly) until the first has
 * ended, its store I/O and all.
 * The verdict is only as good as the TCK: passing means the contract held for this run's
 * interleavings, not that no interleaving can break it.
 */
public final class LiveCheck {
    /** Most lines of a failure message shown; the rest is summarised. */
    private static final int MESSAGE_LINES = 8;
    private static final int LINE_CHARS = 300;

    private static final ReentrantLock RUNNING = new ReentrantLock();
    private static volatile Settings current;

    /** The contracts a check can run, by the name the output and {@code --contract} use. */
    public enum Contract {
        LOCKS("locks", LiveLockContract.class),
        CAS("cas", LiveStoreContract.class),
        FAULTS("faults", LiveStoreFaultContract.class),
        CONTAINMENT("containment", LiveJobContainmentContract.class);

        private final String label;
        private final Class<?> tests;

        Contract(String label, Class<?> tests) {
            this.label = label;
            this.tests = tests;
        }

        public String label() {
            return label;
        }

        /** The contract of {@code label}, or empty. */
        public static Optional<Contract> named(String label) {
            return Arrays.stream(values()).filter(c -> c.label.equals(label)).findFirst();
        }
    }

    /**
     * What to check and how hard.
     *
     * @param backends      where {@code uri}'s backend comes from (built in or a plugin)
     * @param contracts     the contracts to run (at least one)
     * @param casSkipReason why the compare-and-swap contract is skipped, or null to run it
     */
    public record Settings(Backends backends, String uri, Set<Contract> contracts, Duration ttl, int casRounds,
                           String casSkipReason) {
        public Settings {
            Objects.requireNonNull(backends, "backends");
            Objects.requireNonNull(uri, "uri");
            Objects.requireNonNull(ttl, "ttl");
            if (contracts.isEmpty()) throw new IllegalArgumentException("no contract to run");
            contracts = Collections.unmodifiableSet(EnumSet.copyOf(contracts));
        }
    }

    /** How one test ended. */
    public enum Status { PASSED, FAILED, SKIPPED }

    /**
     * One test's result: its contract ({@code locks}, {@code cas}, {@code faults}), its name within
     * it (a failed or aborted class is one result named {@code (whole contract)}), and for a failure
     * the first lines of the reason, for a skip the reason (else empty).
     */
    public record Outcome(String contract, String test, Status status, Duration took, List<String> message) {
        public Outcome {
            message = List.copyOf(message);
        }
    }

    /** Every result in the order the tests finished; a failed or aborted class counts once, as it hides its tests. */
    public record Summary(List<Outcome> outcomes) {
        public Summary {
            outcomes = List.copyOf(outcomes);
        }

        public int passed() {
            return count(Status.PASSED);
        }

        public int failed() {
            return count(Status.FAILED);
        }

        public int skipped() {
            return count(Status.SKIPPED);
        }

        private int count(Status status) {
            return (int) outcomes.stream().filter(o -> o.status() == status).count();
        }
    }

    private LiveCheck() {}

    /** The settings of the running check, for the contract classes. */
    static Settings current() {
        Settings s = current;
        if (s == null) throw new IllegalStateException("the live contracts run only inside 'latchkey check'");
        return s;
    }

    public static Summary run(Settings settings, PrintWriter out) {
        RUNNING.lock();
        try {
            current = settings;
            Reporter reporter = new Reporter(out);
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(settings.contracts().stream().map(c -> selectClass(c.tests)).toList())
                    .build(), reporter);
            Summary summary = new Summary(reporter.outcomes);
            if (summary.outcomes().isEmpty()) {
                throw new IllegalStateException("the JUnit launcher ran no TCK test (is junit-jupiter-engine on the class path?)");
            }
            return summary;
        } finally {
            current = null;
            RUNNING.unlock();
        }
    }

    /** Prints each finished test and keeps its outcome; callbacks come from JUnit's one execution thread. */
    private static final class Reporter implements TestExecutionListener {
        private final PrintWriter out;
        private final Map<String, Long> startedAt = new ConcurrentHashMap<>();
        final List<Outcome> outcomes = new ArrayList<>();

        Reporter(PrintWriter out) {
            this.out = out;
        }

        @Override
        public void executionStarted(TestIdentifier id) {
            startedAt.put(id.getUniqueId(), System.nanoTime());
        }

        /** A measurement a test published (the containment contract's times): shown under the test's line. */
        @Override
        public void reportingEntryPublished(TestIdentifier id, org.junit.platform.engine.reporting.ReportEntry entry) {
            entry.getKeyValuePairs().forEach((k, v) -> out.println("      " + k + ": " + v));
            out.flush();
        }

        @Override
        public void executionSkipped(TestIdentifier id, String reason) {
            record(id, Status.SKIPPED, Duration.ZERO, List.of(reason));
        }

        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            // a container that finished well only groups tests; one that did not hides them, so it counts
            if (!id.isTest() && result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) return;
            Long start = startedAt.remove(id.getUniqueId());
            Duration took = start == null ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - start);
            switch (result.getStatus()) {
                case SUCCESSFUL -> record(id, Status.PASSED, took, List.of());
                case ABORTED -> record(id, Status.SKIPPED, took, List.of(skipReason(result)));
                case FAILED -> record(id, Status.FAILED, took, result.getThrowable().map(LiveCheck::describe).orElse(List.of()));
            }
        }

        private void record(TestIdentifier id, Status status, Duration took, List<String> message) {
            Outcome o = new Outcome(contract(id), test(id), status, took, message);
            outcomes.add(o);
            String seconds = String.format(Locale.ROOT, "  %.1f s", took.toNanos() / 1e9);
            String line = switch (status) {
                case PASSED -> "✓ " + o.contract() + " " + o.test() + seconds;
                case SKIPPED -> "- " + o.contract() + " " + o.test() + "  skipped: " + String.join(" ", message);
                case FAILED -> "✗ " + o.contract() + " " + o.test() + seconds
                        + message.stream().map(l -> "\n      " + l).collect(Collectors.joining());
            };
            out.println(line);
            out.flush(); // one test can take minutes: show progress as it happens
        }
    }

    /** {@code locks}, {@code cas}, {@code faults}: the contract a test belongs to. */
    private static String contract(TestIdentifier id) {
        TestSource source = id.getSource().orElse(null);
        if (source instanceof MethodSource m) return label(m.getClassName());
        if (source instanceof ClassSource c) return label(c.getClassName());
        return "check";
    }

    /** {@code singleHolder}, {@code racingCreatesHaveExactlyOneWinner}, with a parameterized run's name. */
    private static String test(TestIdentifier id) {
        TestSource source = id.getSource().orElse(null);
        if (source instanceof MethodSource m) {
            String method = m.getMethodName();
            boolean plain = id.getDisplayName().startsWith(method + "(");
            return plain || !id.isTest() ? method : method + " [" + id.getDisplayName() + "]";
        }
        if (source instanceof ClassSource) return "(whole contract)";
        return id.getDisplayName();
    }

    private static String label(String className) {
        return Arrays.stream(Contract.values()).filter(c -> c.tests.getName().equals(className))
                .map(Contract::label).findFirst().orElse(className);
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
