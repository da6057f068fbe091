package dev.latchkey.example.redis;

import io.lettuce.core.RedisCommandExecutionException;

/**
 * How Redis's error replies map onto {@link dev.latchkey.LockBackendException}: which are worth
 * retrying and what to do about the others. Redis error texts never echo a password.
 */
final class RedisErrors {
    private RedisErrors() {}

    /**
     * Retriable: the server is loading its data after a restart ({@code LOADING}), busy with a
     * script ({@code BUSY}), or no longer a primary ({@code READONLY}, {@code MASTERDOWN}: during a
     * failover). Not: wrong credentials or rights, a full memory, a key of another type.
     */
    static boolean retriable(RedisCommandExecutionException e) {
        String m = String.valueOf(e.getMessage());
        return m.startsWith("LOADING") || m.startsWith("BUSY") || m.startsWith("READONLY")
                || m.startsWith("MASTERDOWN") || m.startsWith("TRYAGAIN");
    }

    /** A sentence telling the operator what to do, or "". */
    static String advice(RedisCommandExecutionException e) {
        String m = String.valueOf(e.getMessage());
        if (m.startsWith("NOAUTH") || m.startsWith("WRONGPASS")) return " (check the user and password in the URI)";
        if (m.startsWith("NOPERM")) return " (the ACL user needs EVAL, HMGET, SCAN, INFO and SUBSCRIBE, and the lock prefix's keys and channel)";
        if (m.startsWith("WRONGTYPE")) return " (another application uses this key: give the locks their own prefix=…)";
        if (m.startsWith("OOM")) return " (the server is out of memory; locks need maxmemory-policy noeviction and room)";
        if (m.startsWith("READONLY")) return " (the URI names a replica, or a failover is under way: point it at the primary)";
        return "";
    }

    /** The server's error reply inside a connection failure (e.g. a refused AUTH), or null. */
    static RedisCommandExecutionException serverError(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException r) return r;
        }
        return null;
    }

    /** The innermost cause's message: Lettuce wraps "Connection refused" a few levels deep. */
    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) t = t.getCause();
        return t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }
}
