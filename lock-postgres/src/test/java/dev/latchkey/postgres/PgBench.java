package dev.latchkey.postgres;

import dev.latchkey.Durations;
import dev.latchkey.bench.LockBench;
import dev.latchkey.postgres.shared.PgBaselines;
import dev.latchkey.postgres.shared.PgTestSupport;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Not a test: the latency targets, measured with {@code latchkey bench} ({@link LockBench}
 * and this module's {@link PgBaselines}) for {@code mode=advisory&fencing=false}, {@code mode=advisory}
 * and {@code mode=lease} (in a schema of its own, {@link PgTestSupport#LEASE}), each beside its floors in the same run, then the ratios summarised
 * (median over the rounds, as the machine allows):
 * <pre>
 * java -cp &lt;lock-postgres test classpath&gt; dev.latchkey.postgres.PgBench 'postgres://…' [rounds] [duration] [warm-up]
 * </pre>
 */
public final class PgBench {
    private static final String LATENCY = "acquire+release, uncontended";
    private static final String HANDOFF = "handoff, release in A -> waiter in B holds";
    private static final String ADVISORY_FLOOR = "floor: pg_try_advisory_lock + pg_advisory_unlock";
    private static final String COMMITS_FLOOR = "floor: two single-row durable commits";

    private PgBench() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Duration duration = args.length > 2 ? Durations.parse(args[2]) : Duration.ofSeconds(3);
        Duration warmup = args.length > 3 ? Durations.parse(args[3]) : Duration.ofSeconds(1);
        Map<String, String> modes = new LinkedHashMap<>();
        modes.put("advisory, fencing=false", "mode=advisory&fencing=false");
        modes.put("advisory (fencing token)", "mode=advisory");
        modes.put("lease", PgTestSupport.LEASE);
        List<String> labels = List.of(
                "advisory fencing=false p50 us",
                "  raw advisory floor p50 us (same run)",
                "  ratio (target <= 1.3)",
                "advisory default p50 us",
                "  raw advisory floor p50 us (same run)",
                "  ratio (no target)",
                "  fencing token's extra cost us (default - fencing=false)",
                "lease p50 us",
                "  two durable commits floor p50 us (same run)",
                "  ratio (target <= 1.2)",
                "handoff advisory fencing=false p50 us",
                "  raw advisory handoff p50 us (same run)",
                "  ratio (target <= 2)",
                "handoff advisory default p50 us",
                "  raw advisory handoff p50 us (same run)",
                "  ratio (target <= 2)",
                "handoff lease (NOTIFY) p50 us (target < 2000)");
        List<double[]> results = new ArrayList<>();
        PrintWriter out = new PrintWriter(System.out, true);
        for (int round = 1; round <= rounds; round++) {
            Map<String, List<LockBench.Row>> runs = new LinkedHashMap<>();
            for (Map.Entry<String, String> mode : modes.entrySet()) {
                out.printf("%n== round %d: %s%n", round, mode.getKey());
                runs.put(mode.getKey(), LockBench.run(new LockBench.Config(PgTestSupport.with(uri, mode.getValue()), 2, 64,
                        duration, warmup, 0, Duration.ofSeconds(3)), out));
            }
            List<LockBench.Row> quick = runs.get("advisory, fencing=false");
            List<LockBench.Row> fenced = runs.get("advisory (fencing token)");
            List<LockBench.Row> lease = runs.get("lease");
            String rawHandoff = "handoff, " + ADVISORY_FLOOR;
            results.add(new double[] {
                p50(quick, LATENCY), p50(quick, ADVISORY_FLOOR), p50(quick, LATENCY) / p50(quick, ADVISORY_FLOOR),
                p50(fenced, LATENCY), p50(fenced, ADVISORY_FLOOR), p50(fenced, LATENCY) / p50(fenced, ADVISORY_FLOOR),
                p50(fenced, LATENCY) - p50(quick, LATENCY),
                p50(lease, LATENCY), p50(lease, COMMITS_FLOOR), p50(lease, LATENCY) / p50(lease, COMMITS_FLOOR),
                p50(quick, HANDOFF), p50(quick, rawHandoff), p50(quick, HANDOFF) / p50(quick, rawHandoff),
                p50(fenced, HANDOFF), p50(fenced, rawHandoff), p50(fenced, HANDOFF) / p50(fenced, rawHandoff),
                p50(lease, HANDOFF)});
        }
        out.printf("%nsummary over %d round(s): median [each round]%n", rounds);
        for (int i = 0; i < labels.size(); i++) {
            double[] values = new double[results.size()];
            StringBuilder each = new StringBuilder();
            for (int r = 0; r < values.length; r++) {
                values[r] = results.get(r)[i];
                each.append(r == 0 ? "" : " ").append(format(values[r]));
            }
            Arrays.sort(values);
            out.printf(Locale.ROOT, "%-60s %9s   [%s]%n", labels.get(i), format(values[values.length / 2]), each);
        }
    }

    private static double p50(List<LockBench.Row> rows, String name) {
        return rows.stream().filter(r -> r.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no row '" + name + "'")).p50();
    }

    private static String format(double v) {
        return Math.abs(v) < 10 ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%.0f", v);
    }
}
