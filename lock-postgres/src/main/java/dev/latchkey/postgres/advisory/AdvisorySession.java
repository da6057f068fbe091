package dev.latchkey.postgres.advisory;

import dev.latchkey.postgres.shared.PgDriver;
import dev.latchkey.postgres.shared.PgSession;
import java.sql.Connection;

/** A connection of {@code mode=advisory} and what {@link AdvisorySessions} found out and set up on it. */
final class AdvisorySession extends PgSession {
    /** {@link AdvisorySessions#ready} has checked and set up the session. */
    boolean checked;
    /** Behind a pooler: the mark this client set on its server session; null on a direct connection. */
    String mark;
    /** The statements for this session outside a restart window. */
    AdvisorySql sql;
    /** The TTL whose idle and TCP limits the server session carries (0: the database's own). */
    long limitsForTtlMillis;
    /** {@code getNotifications()} on this session reads what has arrived without waiting ({@link PgDriver}). */
    boolean readsWithoutWaiting;
    /** A held lease stretched the network timeout beyond {@code timeout} ({@link AdvisoryLease}); release puts it back. */
    boolean stretched;

    AdvisorySession(Connection connection) {
        super(connection);
    }
}
