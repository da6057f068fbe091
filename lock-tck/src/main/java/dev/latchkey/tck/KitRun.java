package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Proof that the kit has teeth for a backend: run chosen tests of a contract subclass that wraps a
 * deliberately broken variant of the backend, and check that they FAIL on the assertion naming the
 * broken invariant. The kit's own self-test does this with in-memory fakes; a backend author can
 * do it with variants of their store (a compare-and-set in two commands, versions counted per
 * record) to show that the kit would catch those mistakes in their code:
 * <pre>{@code
 * static class TwoCommandCas extends ConditionalStoreContract { ... }   // nested: Surefire skips it
 *
 * @Test void aCompareAndSetInTwoCommandsFailsTheKit() {
 *     Map<String, Throwable> failed = KitRun.failures(TwoCommandCas.class, "racingCreatesHaveExactlyOneWinner");
 *     KitRun.assertFailedOn(failed, "racingCreatesHaveExactlyOneWinner", "did not have exactly one winner");
 * }
 * }</pre>
 * The tests run in a nested JUnit Platform launcher in this JVM, one after another. A selected test
 * that is skipped (an assumption failed) makes {@link #failures} fail: a skip proves nothing.
 */
public final class KitRun {
    private KitRun() {}

    /** Runs {@code methods} of {@code contract}; returns those that failed, by method name, with what they threw. */
    public static Map<String, Throwable> failures(Class<?> contract, String... methods) {
        if (methods.length == 0) throw new IllegalArgumentException("name the contract tests to run");
        List<String> ran = new ArrayList<>();
        List<String> aborted = new ArrayList<>();
        Map<String, Throwable> failed = new LinkedHashMap<>();
        TestExecutionListener listener = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (!id.isTest()) return;
                String m = id.getSource().filter(MethodSource.class::isInstance)
                        .map(s -> ((MethodSource) s).getMethodName()).orElse(id.getDisplayName());
                ran.add(m);
                if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                    failed.put(m, result.getThrowable().orElse(new AssertionError("failed without a throwable")));
                } else if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
                    aborted.add(m + ": " + result.getThrowable().map(Throwable::getMessage).orElse(""));
                }
            }
        };
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(Arrays.stream(methods).map(m -> selectMethod(contract, m)).toList()).build(), listener);
        assertThat(ran).as("tests of %s the nested launcher ran", contract.getSimpleName()).isNotEmpty();
        assertThat(aborted).as("contract tests skipped (a skip proves nothing)").isEmpty();
        return failed;
    }

    /** The test {@code name} failed — not skipped, not passed — with a message (or cause) containing {@code invariant}. */
    public static void assertFailedOn(Map<String, Throwable> failed, String name, String invariant) {
        assertThat(failed).as("contract tests that failed").containsKey(name);
        assertThat(describe(failed.get(name))).as("why %s failed", name).contains(invariant);
    }

    /** A failure with its causes and suppressed exceptions, as one text to search. */
    public static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c).append('\n');
            for (Throwable s : c.getSuppressed()) sb.append(s).append('\n');
        }
        return sb.toString();
    }
}
