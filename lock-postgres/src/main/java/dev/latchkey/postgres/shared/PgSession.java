package dev.latchkey.postgres.shared;

import java.sql.Connection;

/**
 * One connection of a {@link PgPool} and what the pool knows about its server session: how long
 * the server lets it sit idle ({@code idle_session_timeout}) and since when it has been idle, so
 * that a session the server has probably ended is never handed out.
 */
public class PgSession {
    public final Connection connection;
    /** The server ends this session after this long idle ({@code idle_session_timeout}); 0 = never. */
    public volatile long serverIdleLimitNanos;
    /** When the session went back to the pool (guarded by the pool). */
    long idleSinceNanos;

    public PgSession(Connection connection) {
        this.connection = connection;
    }
}
