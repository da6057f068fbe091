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
 * {@code latchkey release --force KEY}: breaks a lock whoever holds it. Refuses without
 * {@code --force}, because the holder may be a job still running: its lease turns lost, and a
 * {@code latchkey run} holding it terminates its command (exit 76).
 */
@Command(name = "release", mixinStandardHelpOptions = true,
        description = {"Break the lock KEY, whoever holds it (requires --force).",
            "The holder's lease is lost: a 'latchkey run' holding it terminates its command and exits 76."})
final class ReleaseCommand implements Callable<Integer> {
    @ParentCommand
    LatchkeyCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    UriOption uri;

    @Option(names = "--force", description = "Confirm breaking a lock another process may hold.")
    boolean force;

    @Parameters(index = "0", paramLabel = "KEY", description = "Name of the lock.")
    String key;

    @Override
    public Integer call() {
        LockKeys.validate(key);
        if (!force) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("latchkey release: refusing to break lock '" + key
                    + "' without --force (its holder may still be working)");
            err.flush();
            return ExitCodes.USAGE;
        }
        try (LockManager locks = root.open(uri)) {
            Optional<LockInfo> holder = locks.inspect(key);
            boolean broke = locks.forceRelease(key);
            PrintWriter out = spec.commandLine().getOut();
            out.println(broke
                    ? "released lock '" + key + "' held by " + holder.map(LockInfo::describeHolder).orElse("another holder")
                    : "lock '" + key + "' was not held");
            out.flush();
            return ExitCodes.OK;
        }
    }
}
