package dev.latchkey.cli;

import dev.latchkey.Latchkey;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code latchkey backends}: the installed URI schemes, what each is, and the jar it comes from. */
@Command(name = "backends", mixinStandardHelpOptions = true,
        description = "List installed backends: URI schemes, description, and the jar providing them.")
final class BackendsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        for (String line : Latchkey.describeProviders()) {
            String[] cols = line.split("\t", 3);
            out.printf("%-22s %s%n%-22s   from %s%n", cols[0], cols.length > 1 ? cols[1] : "", "",
                    cols.length > 2 ? cols[2] : "?");
        }
        out.flush();
        return ExitCodes.OK;
    }
}
