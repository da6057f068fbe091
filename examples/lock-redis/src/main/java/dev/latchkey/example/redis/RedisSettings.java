package dev.latchkey.example.redis;

import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * A {@code redis://} URI, parsed and checked once:
 * {@code redis://[[user]:password@]host[:port][/db][?prefix=latchkey&timeout=2s&poll=100ms&requireAof=true]}.
 *
 * <p><b>Guarantee.</b> Every invalid URI is refused here, before a connection is made, with a
 * message that names the bad part and shows the URI masked ({@link LockUri#toString()}); the
 * password is held only for the client and never appears in {@link #toString()} or
 * {@link #describe()}.
 *
 * @param host       the server (one primary; see README.md for what replication does not give)
 * @param port       default 6379
 * @param database   the logical database, {@code /N} (default 0)
 * @param user       ACL user, if any (Redis 6+); absent: the {@code default} user
 * @param password   absent: no {@code AUTH}
 * @param prefix     records live at {@code <prefix>:<encoded key>}; a lock is identified by
 *                   server, database, prefix and key
 * @param timeout    per command; a write that times out has an unknown outcome
 * @param poll       longest pause between looks at a held lock while waiting
 * @param requireAof refuse a server whose append-only file is off (default true): without it a
 *                   restart rewinds the data, and with it fencing tokens
 * @param shown      the URI masked, for messages
 */
public record RedisSettings(String host, int port, int database, Optional<String> user, Optional<String> password,
                            String prefix, Duration timeout, Duration poll, boolean requireAof, String shown) {
    private static final Set<String> PARAMS = Set.of("prefix", "timeout", "poll", "requireAof");
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration DEFAULT_POLL = Duration.ofMillis(100);

    /** Never shows the password: the record's generated form would. */
    @Override
    public String toString() {
        return shown;
    }

    /** The masked URI. */
    public String describe() {
        return shown;
    }

    public static RedisSettings parse(LockUri uri) {
        uri.requireOnly(PARAMS);
        String shown = uri.toString();
        if (!uri.scheme().equals("redis")) {
            throw new UnsupportedLockUriException("not a redis:// URI: " + shown);
        }
        if (uri.host().isEmpty()) {
            throw new UnsupportedLockUriException("redis:// needs a host, e.g. redis://127.0.0.1:6379/0 (got " + shown + ")");
        }
        int database = database(uri.path(), shown);
        // "redis://:secret@host": Redis's own convention for a password without a user
        Optional<String> user = uri.user().filter(u -> !u.isEmpty());
        Optional<String> password = uri.password();
        if (user.isPresent() && password.isEmpty()) {
            throw new UnsupportedLockUriException("redis:// user info needs a password (redis://user:password@host, or "
                    + "redis://:password@host for the default user): " + shown);
        }
        String prefix = uri.param("prefix", "latchkey");
        if (!prefix.matches("[A-Za-z0-9_.:-]{1,64}")) {
            throw new UnsupportedLockUriException("prefix must be 1-64 characters of [A-Za-z0-9_.:-] (no glob characters: "
                    + "list() matches it with SCAN), got '" + prefix + "' in " + shown);
        }
        Duration timeout = uri.durationParam("timeout", DEFAULT_TIMEOUT);
        Duration poll = uri.durationParam("poll", DEFAULT_POLL);
        if (timeout.isNegative() || timeout.isZero() || poll.isNegative() || poll.isZero()) {
            throw new UnsupportedLockUriException("timeout and poll must be positive in " + shown);
        }
        return new RedisSettings(uri.host(), uri.port().orElse(6379), database, user, password, prefix, timeout, poll,
                uri.booleanParam("requireAof", true), shown);
    }

    private static int database(String path, String shown) {
        if (path.isEmpty() || path.equals("/")) return 0;
        String db = path.substring(1);
        if (!db.matches("[0-9]{1,5}")) {
            throw new UnsupportedLockUriException("the path of a redis:// URI is the database number (/0, /1, …), got '"
                    + path + "' in " + shown);
        }
        return Integer.parseInt(db);
    }
}
