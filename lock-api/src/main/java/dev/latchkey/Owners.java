package dev.latchkey;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The default owner string, {@code user@host/pid}: enough for a person to find the holder. The host
 * is the machine's own name (what {@code gethostname} returns), found without a name-service lookup
 * where the system shows it (Linux), so a first lease never waits on DNS.
 */
final class Owners {
    /** Linux: the name {@code gethostname} returns, as a file. */
    private static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

    private static final String DEFAULT = compute();

    private Owners() {}

    static String defaultOwner() {
        return DEFAULT;
    }

    private static String compute() {
        return System.getProperty("user.name", "unknown") + "@" + hostName() + "/" + ProcessHandle.current().pid();
    }

    /**
     * The same name as {@code InetAddress.getLocalHost().getHostName()} when that resolves, which it
     * only does after looking the name up (a DNS round trip, or its timeout where the name does not
     * resolve: then {@code $HOSTNAME}). Read from {@link #KERNEL_HOSTNAME} where it exists.
     */
    static String hostName() {
        try {
            String name = Files.readString(KERNEL_HOSTNAME, StandardCharsets.UTF_8).strip();
            if (!name.isEmpty()) return name;
        } catch (IOException | RuntimeException e) {
            // not Linux, or no /proc: ask the name service
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return System.getenv().getOrDefault("HOSTNAME", "unknown-host");
        }
    }
}
