package dev.latchkey.cli;

import dev.latchkey.bench.LockBench;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey bench URI}: the measurements of {@link LockBench} against a live backend. It
 * takes and releases keys under a random {@code latchkey-bench-…/} prefix only.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Measure a backend: uncontended acquire+release latency beside its floor, "
                + "throughput of T threads over K keys beside the floor's, handoff between two managers, and (with --hold) "
                + "the cost of many held leases: renewals per second and those that missed, heap, threads, sockets.",
            "Uses keys under a random latchkey-bench-…/ prefix and releases them."})
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    LatchkeyCommand root;

    @Parameters(index = "0", paramLabel = "URI", description = "Backend to measure, e.g. mem://bench or file:///tmp/bench.")
    String uri;

    @Option(names = "--threads", defaultValue = "4", paramLabel = "T", description = "Throughput threads (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--keys", defaultValue = "64", paramLabel = "K", description = "Keys the throughput threads spread over (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--duration", defaultValue = "3s", paramLabel = "D", converter = DurationConverter.class,
            description = "Measuring time per phase (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--warmup", defaultValue = "1s", paramLabel = "D", converter = DurationConverter.class,
            description = "Warm-up before each phase (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(names = "--hold", defaultValue = "0", paramLabel = "N",
            description = "Also hold N leases at once with heartbeat on, for one TTL, through a manager of their own; report "
                    + "renewals per second against those due, renewals that failed, leases lost, heap, threads and open sockets.")
    int hold;

    @Option(names = "--hold-ttl", defaultValue = "3s", paramLabel = "D", converter = DurationConverter.class,
            description = "TTL of the held leases; they are held for one TTL, renewed every TTL/3 (default: ${DEFAULT-VALUE}).")
    Duration holdTtl;

    @Override
    public Integer call() throws Exception {
        // the command's backends, so a plugin's scheme is measured like a built-in one
        LockBench.run(new LockBench.Config(uri, threads, keys, duration, warmup, hold, holdTtl),
                spec.commandLine().getOut(), (u, context) -> root.backends().open(u, context));
        return ExitCodes.OK;
    }
}
