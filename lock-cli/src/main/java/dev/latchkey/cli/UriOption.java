package dev.latchkey.cli;

import java.util.Map;
import picocli.CommandLine.Option;

/** The {@code --uri} option shared by the lock commands, with its fallbacks. */
final class UriOption {
    @Option(names = "--uri", paramLabel = "URI",
            description = "Lock backend, e.g. file:///var/lock/latchkey, postgres://host/db. "
                    + "Default: $LATCHKEY_URI, else file://$HOME/.latchkey/locks.")
    String uri;

    /** The explicit URI, else {@code $LATCHKEY_URI}, else the per-user {@code file://} directory. */
    String resolve(Map<String, String> env) {
        if (uri != null) return uri;
        String fromEnv = env.get("LATCHKEY_URI");
        if (fromEnv != null && !fromEnv.isBlank()) return fromEnv;
        return "file://" + LatchkeyCommand.home(env) + "/.latchkey/locks";
    }
}
