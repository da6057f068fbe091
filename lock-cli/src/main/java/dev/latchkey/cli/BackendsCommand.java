package dev.latchkey.cli;

import dev.latchkey.spi.LockProvider;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code latchkey backends}: the installed URI schemes, what each is, and the jar it comes from
 * (built in, or a plugin's). A plugin that could not be loaded is named on stderr with its cause
 * and makes the status 1, so a script that checks an install sees it.
 */
@Command(name = "backends", mixinStandardHelpOptions = true,
        description = {"List installed backends: URI schemes, description, and the jar providing them.",
            "Plugins are read from $LATCHKEY_PLUGIN_PATH (jars and directories of jars, ':'-separated) "
                    + "and ~/.latchkey/plugins/ (each jar, and each directory of jars, is one plugin)."},
        exitCodeListHeading = "%nExit status:%n", exitCodeList = {
            "0:Every plugin loaded.",
            "1:A plugin could not be loaded (named on stderr with the cause); the rest are listed."})
final class BackendsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    LatchkeyCommand root;

    @Override
    public Integer call() {
        Backends backends = root.backends();
        // one entry per provider, with all its schemes, in scheme order
        Map<LockProvider, List<Backends.Backend>> byProvider = new LinkedHashMap<>();
        for (Backends.Backend b : backends.all()) byProvider.computeIfAbsent(b.provider(), p -> new ArrayList<>()).add(b);
        PrintWriter out = spec.commandLine().getOut();
        byProvider.forEach((p, bs) -> {
            Backends.Backend b = bs.get(0);
            String plugin = b.plugin() == null ? ""
                    : b.origin().equals(b.plugin().toString()) ? " (plugin)" : " (plugin " + b.plugin() + ")";
            out.printf("%-22s %s%n%-22s   from %s%s%n", String.join(", ", bs.stream().map(Backends.Backend::scheme).toList()),
                    b.description(), "", b.origin(), plugin);
        });
        out.flush();
        return backends.problems().isEmpty() ? ExitCodes.OK : ExitCodes.FAILURE;
    }
}
