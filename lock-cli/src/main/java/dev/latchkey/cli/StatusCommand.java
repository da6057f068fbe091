package dev.latchkey.cli;

import dev.latchkey.Capability;
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
 * {@code latchkey status KEY}: who holds KEY, as the store records it, in {@code name value}
 * lines for people and {@code awk}, or as one JSON object ({@link LockJson}). Read-only; the times are the holder's own report.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = {"Show who holds the lock KEY.",
            "Prints 'name value' lines: key, state (held|free), and for a held lock owner, since, "
                    + "expires, token, lease and any metadata (meta.cmd is the command of 'latchkey run'); "
                    + "a line whose value the backend does not know is left out.",
            "With --json, one JSON object: key, held, owner, leaseId, fencingToken (null where the backend "
                    + "has no fencing tokens), acquiredAt, expiresAt (ISO-8601, or null), metadata; null fields "
                    + "and an empty metadata when the lock is free."})
final class StatusCommand implements Callable<Integer> {
    @ParentCommand
    LatchkeyCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    UriOption uri;

    @Option(names = "--json", description = "Print one JSON object instead of 'name value' lines.")
    boolean json;

    @Parameters(index = "0", paramLabel = "KEY", description = "Name of the lock.")
    String key;

    @Override
    public Integer call() {
        LockKeys.validate(key);
        try (LockManager locks = root.open(uri)) {
            Optional<LockInfo> info = locks.inspect(key);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(LockJson.status(key, info, locks.capabilities().contains(Capability.FENCING_TOKENS)));
            } else if (info.isEmpty()) {
                out.println("key      " + key);
                out.println("state    free");
            } else {
                LockInfo i = info.get();
                out.println("key      " + key);
                out.println("state    held");
                out.println("owner    " + i.owner());
                // a store-side wait (PostgreSQL's restart guard) has an end but no acquisition and no lease
                if (i.acquiredAt() != null) out.println("since    " + i.acquiredAt());
                if (i.expiresAt() != null) out.println("expires  " + i.expiresAt());
                out.println("token    " + i.fencingToken());
                if (i.leaseId() != null) out.println("lease    " + i.leaseId());
                i.metadata().forEach((k, v) -> out.println("meta." + k + " " + v));
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
