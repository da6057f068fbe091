package dev.latchkey.cli;

import dev.latchkey.LockInfo;
import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey release --force KEY}: breaks a lock. Refuses without {@code --force}, because the
 * holder may be a job still running: its lease turns lost at once, and a {@code latchkey run}
 * holding it terminates its command (exit 76) — possibly after the next holder got in.
 *
 * <p>Without {@code --lease-id} it breaks whoever holds KEY at that moment, and names the lease it
 * actually broke: each attempt breaks only the lease it has just looked up, and looks again if the
 * lock changed hands in between (after five such looks, or for a holder the store names no lease
 * for, it breaks whoever holds it then, unnamed). With {@code --lease-id ID} it breaks lease ID only; a later holder
 * is left alone and the status is 75.
 */
@Command(name = "release", mixinStandardHelpOptions = true,
        description = {"Break the lock KEY (requires --force): whoever holds it, or with --lease-id only that lease.",
            "The holder's lease is lost: a 'latchkey run' holding it terminates its command and exits 76."},
        exitCodeListHeading = "%nExit status:%n", exitCodeList = {
            "0:Broken, or it was not held.",
            "2:Usage error (no --force), bad or unknown URI, invalid key.",
            "69:Backend unavailable.",
            "75:--lease-id: another lease holds the lock now; it was left alone."})
final class ReleaseCommand implements Callable<Integer> {
    /** Looks after which a lock that keeps changing hands is broken whoever holds it, unnamed. */
    private static final int TARGETED_ATTEMPTS = 5;

    @ParentCommand
    LatchkeyCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    UriOption uri;

    @Option(names = "--force", description = "Confirm breaking a lock another process may hold.")
    boolean force;

    @Option(names = "--lease-id", paramLabel = "ID",
            description = "Break the lock only while lease ID (the 'lease' line of 'latchkey status') holds it.")
    String leaseId;

    @Parameters(index = "0", paramLabel = "KEY", description = "Name of the lock.")
    String key;

    @Override
    public Integer call() {
        LockKeys.validate(key);
        PrintWriter err = spec.commandLine().getErr();
        if (!force) {
            err.println("latchkey release: refusing to break lock '" + key
                    + "' without --force (its holder may still be working)");
            err.flush();
            return ExitCodes.USAGE;
        }
        try (LockManager locks = root.open(uri)) {
            PrintWriter out = spec.commandLine().getOut();
            if (leaseId != null) {
                if (locks.forceRelease(key, leaseId)) {
                    out.println("released lock '" + key + "' held by lease " + leaseId);
                    out.flush();
                    return ExitCodes.OK;
                }
                Optional<LockInfo> now = locks.inspect(key);
                if (now.isPresent()) {
                    err.println("latchkey release: lease " + leaseId + " does not hold lock '" + key + "'; "
                            + now.get().describeHolder() + " (lease " + now.get().leaseId() + ") does, left alone");
                    err.flush();
                    return ExitCodes.BUSY;
                }
                out.println("lock '" + key + "' was not held");
                out.flush();
                return ExitCodes.OK;
            }
            out.println(breakWhoeverHolds(locks));
            out.flush();
            return ExitCodes.OK;
        }
    }

    /** Breaks the current holder, naming the one broken; the line to print. */
    private String breakWhoeverHolds(LockManager locks) {
        for (int attempt = 0; attempt < TARGETED_ATTEMPTS; attempt++) {
            Optional<LockInfo> seen = locks.inspect(key);
            if (seen.isEmpty()) return "lock '" + key + "' was not held";
            if (seen.get().leaseId() == null) break; // the store names no lease to target
            if (locks.forceRelease(key, seen.get().leaseId())) {
                return "released lock '" + key + "' held by " + seen.get().describeHolder();
            }
            // released or taken over since the look: look again
        }
        return locks.forceRelease(key) ? "released lock '" + key + "' held by another holder" : "lock '" + key + "' was not held";
    }
}
