package dev.latchkey.cli;

import dev.latchkey.Capability;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.io.PrintWriter;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey list [PREFIX]}: held locks sorted by key, one tab-separated line each or one JSON
 * document ({@link LockJson}). Read-only.
 */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = {"List held locks whose key starts with PREFIX.",
            "Tab-separated columns after a header: KEY, OWNER, SINCE, EXPIRES, TOKEN. Exit 1 if the "
                    + "backend cannot enumerate locks.",
            "With --json, one JSON object {\"locks\": [...]}, each lock with the fields of 'status --json' "
                    + "but 'held': key, owner, leaseId, fencingToken, acquiredAt, expiresAt, metadata."})
final class ListCommand implements Callable<Integer> {
    @ParentCommand
    LatchkeyCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    UriOption uri;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Parameters(index = "0", arity = "0..1", paramLabel = "PREFIX", defaultValue = "",
            description = "Only keys starting with this (default: all).")
    String prefix;

    @Override
    public Integer call() {
        try (LockManager locks = root.open(uri)) {
            List<LockInfo> held = locks.list(prefix).stream().sorted(Comparator.comparing(LockInfo::key)).toList();
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(LockJson.list(held, locks.capabilities().contains(Capability.FENCING_TOKENS)));
            } else {
                out.println("KEY\tOWNER\tSINCE\tEXPIRES\tTOKEN");
                held.forEach(i -> out.println(
                        i.key() + "\t" + i.owner() + "\t" + i.acquiredAt() + "\t" + i.expiresAt() + "\t" + i.fencingToken()));
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
