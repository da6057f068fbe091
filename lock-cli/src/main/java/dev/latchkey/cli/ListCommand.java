package dev.latchkey.cli;

import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.io.PrintWriter;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code latchkey list [PREFIX]}: held locks, one tab-separated line each, sorted by key. Read-only. */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = {"List held locks whose key starts with PREFIX.",
            "Tab-separated columns after a header: KEY, OWNER, SINCE, EXPIRES, TOKEN. Exit 1 if the "
                    + "backend cannot enumerate locks."})
final class ListCommand implements Callable<Integer> {
    @ParentCommand
    LatchkeyCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    UriOption uri;

    @Parameters(index = "0", arity = "0..1", paramLabel = "PREFIX", defaultValue = "",
            description = "Only keys starting with this (default: all).")
    String prefix;

    @Override
    public Integer call() {
        try (LockManager locks = root.open(uri)) {
            List<LockInfo> held = locks.list(prefix);
            PrintWriter out = spec.commandLine().getOut();
            out.println("KEY\tOWNER\tSINCE\tEXPIRES\tTOKEN");
            held.stream().sorted(Comparator.comparing(LockInfo::key)).forEach(i -> out.println(
                    i.key() + "\t" + i.owner() + "\t" + i.acquiredAt() + "\t" + i.expiresAt() + "\t" + i.fencingToken()));
            out.flush();
            return ExitCodes.OK;
        }
    }
}
