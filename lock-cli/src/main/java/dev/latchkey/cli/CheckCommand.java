package dev.latchkey.cli;

import dev.latchkey.Capability;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import dev.latchkey.cli.check.LiveCheck;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey check URI}: the project's TCK run in this JVM against a live deployment, to
 * answer "is this store really safe for these locks?". It reaches the store once before any test
 * (so an unreachable one is reported as such, not as failed tests), then runs the lock contract
 * and, for a backend that declares {@code CONDITIONAL_STORE} and exposes its store through
 * {@link dev.latchkey.spi.LockProvider#openStore}, the compare-and-swap race and store-fault
 * contracts. It writes only under random {@code tck-…} names and deletes nothing it did not
 * create; the URI is only ever shown masked. For pipelines, {@code --report} writes JUnit XML and
 * {@code --json} prints the results as one JSON document ({@link CheckReport}, docs/check.md).
 */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = {"Run the Latchkey compatibility kit (TCK) against a live backend: is this "
                + "MinIO / R2 / Ceph / GCS bucket / PostgreSQL / ... really safe for these locks?",
            "Prints one line per test (✓ passed, ✗ failed with the first lines of the reason, - skipped "
                    + "with the reason), then 'check: N passed, N failed, N skipped'. Takes a few minutes.",
            "Writes only under random names: lock keys tck-<random>/… and store records "
                    + "tck-cas-<random>-…. The store contract sends about 16 x --cas-rounds small "
                    + "conditional writes (3,200 by default); about 2 x --cas-rounds of them land "
                    + "(new records, and overwrites of one record: versions, in a versioned bucket), and "
                    + "it leaves about --cas-rounds + 6 records behind. The lock contract leaves the "
                    + "records of its released keys, about a hundred (the lease engine keeps them so "
                    + "fencing tokens keep increasing). Nothing it did not create is changed or deleted; "
                    + "remove the tck-* names by hand if you wish.",
            "The multi-process tests are skipped (they need child JVMs with the TCK's class path)."},
        exitCodeListHeading = "%nExit status:%n", exitCodeList = {
            "0:Every test that ran passed.",
            "1:At least one test failed: do not trust this deployment for locks (or the --report file could not be written).",
            "2:Bad option or bad/unknown URI.",
            "69:The backend could not be opened or reached; no test ran."})
final class CheckCommand implements Callable<Integer> {
    /** Read once before the tests: a real request that proves the store answers. */
    private static final String PROBE_KEY = "latchkey-check/probe";

    @Spec
    CommandSpec spec;

    @ParentCommand
    LatchkeyCommand root;

    @Parameters(index = "0", paramLabel = "URI",
            description = "Backend to check, e.g. s3://bucket/prefix?endpoint=http://minio:9000 or postgres://host/db.")
    String uri;

    @Option(names = "--ttl", defaultValue = "1s", paramLabel = "D", converter = DurationConverter.class,
            description = "TTL of the leases the expiry, takeover and heartbeat tests let run out or keep alive; "
                    + "they wait about 2.5 x this (default: ${DEFAULT-VALUE}). Slow stores and stores whose clock "
                    + "has whole-second resolution want 2s-3s; Azure lease mode needs 15s-60s.")
    Duration ttl;

    @Option(names = "--cas-rounds", defaultValue = "200", paramLabel = "N",
            description = "Rounds of each compare-and-swap race, 8 clients per round (default: ${DEFAULT-VALUE}).")
    int casRounds;

    @Option(names = "--skip-cas", description = "Skip the compare-and-swap race and store-fault contracts (and their writes).")
    boolean skipCas;

    @Option(names = "--contract", split = ",", paramLabel = "NAME",
            description = "Run only these contracts: locks, cas, faults, containment (comma-separated or repeated; default: all four). "
                    + "E.g. --contract cas for the compare-and-swap races alone, which take seconds.")
    List<String> contracts = List.of();

    @Option(names = "--report", paramLabel = "FILE",
            description = "Also write the results as JUnit XML to FILE (one testcase per test; failures with their message), for CI.")
    Path report;

    @Option(names = "--json", description = "Print the results as one JSON document on stdout (progress goes to stderr); see docs/check.md.")
    boolean json;

    @Override
    public Integer call() {
        if (ttl.isNegative() || ttl.isZero()) throw new ParameterException(spec.commandLine(), "--ttl must be positive");
        if (casRounds < 1) throw new ParameterException(spec.commandLine(), "--cas-rounds must be at least 1");
        Set<LiveCheck.Contract> chosen = chosenContracts();
        String shown = LockUri.parse(uri).toString(); // a bad URI ends here, as a usage error
        if (report != null && !Files.isDirectory(report.toAbsolutePath().getParent())) {
            throw new ParameterException(spec.commandLine(), "--report: directory " + report.toAbsolutePath().getParent() + " does not exist");
        }
        Backends backends = root.backends();

        String description;
        String casSkipReason;
        try (LockManager probe = backends.open(uri, LockContext.defaults())) {
            probe.inspect(PROBE_KEY);
            description = probe.description();
            casSkipReason = skipCas ? "--skip-cas"
                    : !probe.capabilities().contains(Capability.CONDITIONAL_STORE)
                    ? "this backend locks with its own primitive (it does not declare CONDITIONAL_STORE)"
                    : !chosen.contains(LiveCheck.Contract.CAS) && !chosen.contains(LiveCheck.Contract.FAULTS) ? null // not run: the store stays closed
                    : exposesStore(backends) ? null
                    : "this backend declares CONDITIONAL_STORE but its provider does not expose the store (LockProvider.openStore)";
        } catch (LockException | IllegalArgumentException e) {
            throw e; // already say what they are: unknown scheme or bad parameter (2), unreachable (69), ...
        } catch (RuntimeException e) {
            // an SDK failure the provider did not translate: still "could not reach", not a latchkey bug
            throw new LockBackendException("cannot reach " + shown + ": " + e, false, e);
        }

        // with --json, stdout carries the document alone and the progress goes to stderr
        PrintWriter progress = json ? spec.commandLine().getErr() : spec.commandLine().getOut();
        progress.println("check: " + shown + (description.equals(shown) ? "" : " (" + description + ")")
                + (chosen.size() == LiveCheck.Contract.values().length ? ""
                        : ", contracts " + chosen.stream().map(LiveCheck.Contract::label).collect(Collectors.joining(",")))
                + ", ttl " + ttl.toMillis() + " ms, "
                + (casSkipReason == null ? "cas rounds " + casRounds : "cas skipped"));
        progress.flush();
        LiveCheck.Settings settings = new LiveCheck.Settings(backends, uri, chosen, ttl, casRounds, casSkipReason);
        LiveCheck.Summary s = LiveCheck.run(settings, progress);
        progress.println("check: " + s.passed() + " passed, " + s.failed() + " failed, " + s.skipped() + " skipped");
        progress.flush();

        CheckReport results = new CheckReport(shown, description, settings, s);
        if (json) {
            spec.commandLine().getOut().println(results.json());
            spec.commandLine().getOut().flush();
        }
        if (report != null) {
            try {
                results.writeJUnitXml(report);
            } catch (IOException e) {
                spec.commandLine().getErr().println("latchkey: check: could not write --report " + report + ": " + e);
                spec.commandLine().getErr().flush();
                return ExitCodes.FAILURE;
            }
        }
        return s.failed() == 0 ? ExitCodes.OK : ExitCodes.FAILURE;
    }

    private Set<LiveCheck.Contract> chosenContracts() {
        if (contracts.isEmpty()) return EnumSet.allOf(LiveCheck.Contract.class);
        Set<LiveCheck.Contract> chosen = EnumSet.noneOf(LiveCheck.Contract.class);
        for (String name : contracts) {
            chosen.add(LiveCheck.Contract.named(name.strip()).orElseThrow(() -> new ParameterException(spec.commandLine(),
                    "--contract: unknown contract '" + name + "' (choose from locks, cas, faults, containment)")));
        }
        return chosen;
    }

    /** Whether the provider hands out the store (closed again at once: the contracts open their own). */
    private boolean exposesStore(Backends backends) {
        Optional<ConditionalStore> store = backends.openStore(uri);
        store.ifPresent(ConditionalStore::close);
        return store.isPresent();
    }
}
