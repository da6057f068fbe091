package dev.latchkey.cli;

import dev.latchkey.Latchkey;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import dev.latchkey.cli.check.LiveCheck;
import dev.latchkey.engine.LeaseEngine;
import dev.latchkey.spi.LockUri;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey check URI}: the project's TCK run in this JVM against a live deployment, to
 * answer "is this store really safe for these locks?". It reaches the store once before any test
 * (so an unreachable one is reported as such, not as failed tests), then runs the lock contract
 * and, for stores under the lease engine, the compare-and-swap race contract. It writes only
 * under random {@code tck-…} names and deletes nothing it did not create; the URI is only ever
 * shown masked.
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
            "1:At least one test failed: do not trust this deployment for locks.",
            "2:Bad option or bad/unknown URI.",
            "69:The backend could not be opened or reached; no test ran."})
final class CheckCommand implements Callable<Integer> {
    /** Read once before the tests: a real request that proves the store answers. */
    private static final String PROBE_KEY = "latchkey-check/probe";

    @Spec
    CommandSpec spec;

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

    @Override
    public Integer call() {
        if (ttl.isNegative() || ttl.isZero()) throw new ParameterException(spec.commandLine(), "--ttl must be positive");
        if (casRounds < 1) throw new ParameterException(spec.commandLine(), "--cas-rounds must be at least 1");
        String shown = LockUri.parse(uri).toString(); // a bad URI ends here, as a usage error

        String description;
        String casSkipReason;
        try (LockManager probe = Latchkey.open(uri)) {
            probe.inspect(PROBE_KEY);
            description = probe.description();
            casSkipReason = skipCas ? "--skip-cas"
                    : probe instanceof LeaseEngine ? null
                    : "this backend locks with its own primitive, not the lease engine over a conditional store";
        } catch (LockException | IllegalArgumentException e) {
            throw e; // already say what they are: unknown scheme or bad parameter (2), unreachable (69), ...
        } catch (RuntimeException e) {
            // an SDK failure the provider did not translate: still "could not reach", not a latchkey bug
            throw new LockBackendException("cannot reach " + shown + ": " + e, false, e);
        }

        PrintWriter out = spec.commandLine().getOut();
        out.println("check: " + shown + (description.equals(shown) ? "" : " (" + description + ")")
                + ", ttl " + ttl.toMillis() + " ms, "
                + (casSkipReason == null ? "cas rounds " + casRounds : "cas skipped"));
        out.flush();
        LiveCheck.Summary s = LiveCheck.run(new LiveCheck.Settings(uri, ttl, casRounds, casSkipReason), out);
        out.println("check: " + s.passed() + " passed, " + s.failed() + " failed, " + s.skipped() + " skipped");
        out.flush();
        return s.failed() == 0 ? ExitCodes.OK : ExitCodes.FAILURE;
    }
}
