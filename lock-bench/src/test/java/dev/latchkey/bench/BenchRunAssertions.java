package dev.latchkey.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Durations;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Checks a short {@code latchkey bench URI} run against a real backend: the lock measured beside its
 * floor in the same run, the ratio printed, no secret printed, no floor object left behind.
 *
 * <p>Shared by the backends' bench tests through lock-bench's test jar ({@code lock-bench:tests});
 * each test supplies only what is its own: the URI, the floor's row name, the secret and how to list
 * the store's objects. Counts and labels only: nothing here asserts a timing.
 * <pre>{@code
 * BenchRunAssertions.run(uri)
 *         .measuresFloor("floor: 2 unconditional PutObject of 224 B")
 *         .doesNotPrint(secret)
 *         .leavesNoFloorObjects(prefix -> client.list(bucket, prefix));
 * }</pre>
 */
public final class BenchRunAssertions {
    private static final String LATENCY_ROW = "acquire+release, uncontended";
    private static final String THROUGHPUT_ROW = "throughput, tryAcquire+release";
    private static final String HANDOFF_ROW = "handoff, release in A -> waiter in B holds";
    /** The leaf name every {@link UploadBaseline} object starts with. */
    static final String FLOOR_LEAF = ".latchkey-bench-floor";

    private final LockUri uri;
    private final List<LockBench.Row> rows;
    private final String printed;

    private BenchRunAssertions(LockUri uri, List<LockBench.Row> rows, String printed) {
        this.uri = uri;
        this.rows = rows;
        this.printed = printed;
    }

    /**
     * Runs the bench on {@code uri} with 2 threads over 4 keys, no hold phase, 300 ms per phase after
     * 50 ms of warm-up ({@code -Dlatchkey.bench.duration=…}/{@code -Dlatchkey.bench.warmup=…} for a
     * real measurement), and prints the table to standard output, for people reading the test report.
     */
    public static BenchRunAssertions run(String uri) throws Exception {
        StringWriter text = new StringWriter();
        List<LockBench.Row> rows;
        try (PrintWriter out = new PrintWriter(text)) {
            rows = LockBench.run(new LockBench.Config(uri, 2, 4, duration("duration", "300ms"),
                    duration("warmup", "50ms"), 0, Duration.ofSeconds(3)), out);
        }
        String printed = text.toString();
        System.out.print(printed);
        return new BenchRunAssertions(LockUri.parse(uri), rows, printed);
    }

    /**
     * The first two rows are the lock's uncontended latency and {@code floorRow} (e.g.
     * {@code floor: SELECT 1 round trip}), both with samples, the floor measured in the same run
     * with a positive p50; the throughput and handoff rows have samples; the table names the floor
     * and prints the ratio of p50s, so a baseline was found for the scheme.
     */
    public BenchRunAssertions measuresFloor(String floorRow) {
        assertThat(rows).extracting(LockBench.Row::name).startsWith(LATENCY_ROW, floorRow);
        assertThat(rows.get(0).samples()).as("samples of %s", LATENCY_ROW).isPositive();
        LockBench.Row floor = rows.get(1);
        assertThat(floor.samples()).as("samples of %s", floorRow).isPositive();
        assertThat(floor.p50()).as("p50 of %s", floorRow).isPositive();
        assertThat(floor.note()).contains("same run, no Latchkey");
        assertThat(row(THROUGHPUT_ROW).samples()).as("samples of %s", THROUGHPUT_ROW).isPositive();
        assertThat(row(HANDOFF_ROW).samples()).as("samples of %s", HANDOFF_ROW).isPositive();
        assertThat(printed)
                .contains(floorRow)
                .contains("ratio of p50s: acquire+release / " + floorRow + " = ")
                .doesNotContain("no baseline installed");
        return this;
    }

    /** The printed table does not contain {@code secret} (a key or password taken from the URI). */
    public BenchRunAssertions doesNotPrint(String secret) {
        Objects.requireNonNull(secret, "secret");
        assertThat(printed).as("the bench's output").doesNotContain(secret);
        return this;
    }

    /**
     * Nothing is left under the floor's object prefix ({@code <URI path>/.latchkey-bench-floor}, see
     * {@link UploadBaseline}): {@code listUnder} lists the store's objects whose names start with the
     * prefix it is given, in the URI's bucket or container.
     */
    public BenchRunAssertions leavesNoFloorObjects(Function<String, ? extends Iterable<?>> listUnder) {
        assertThat(listUnder.apply(floorObjectPrefix(uri))).as("the floor deletes its object on close").isEmpty();
        return this;
    }

    /** The row named {@code name}; fails naming every row if there is none. */
    private LockBench.Row row(String name) {
        return rows.stream().filter(r -> r.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no row '" + name + "' in " + rows));
    }

    /** {@code .latchkey-bench-floor} under the URI's path with its slashes trimmed, as the object stores place it. */
    static String floorObjectPrefix(LockUri uri) {
        String prefix = uri.path().replaceAll("^/+|/+$", "");
        return (prefix.isEmpty() ? "" : prefix + "/") + FLOOR_LEAF;
    }

    private static Duration duration(String what, String otherwise) {
        return Durations.parse(System.getProperty("latchkey.bench." + what, otherwise));
    }
}
