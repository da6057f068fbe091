package dev.latchkey;

import java.net.InetAddress;

/** The default owner string, {@code user@host/pid}: enough for a person to find the holder. */
final class Owners {
    private static final String DEFAULT = compute();

    private Owners() {}

    static String defaultOwner() {
        return DEFAULT;
    }

    private static String compute() {
        String user = System.getProperty("user.name", "unknown");
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = System.getenv().getOrDefault("HOSTNAME", "unknown-host");
        }
        return user + "@" + host + "/" + ProcessHandle.current().pid();
    }
}
