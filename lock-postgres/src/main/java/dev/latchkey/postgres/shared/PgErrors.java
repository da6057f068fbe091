package dev.latchkey.postgres.shared;

import dev.latchkey.LockBackendException;
import java.sql.SQLException;

/**
 * Turns driver errors into {@link LockBackendException}s that name the endpoint (never the
 * password) and say whether retrying can help: lost or refused connections, timeouts, a server
 * shutting down or out of resources are retriable; authentication, permission and missing
 * database errors are not, and come with advice.
 */
public final class PgErrors {
    private PgErrors() {}

    /** True when the error means the session is gone (so any session-level lock it held is freed). */
    public static boolean connectionLost(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.startsWith("57P"));
    }

    /**
     * True when the statement may or may not have taken effect: the connection failed (or timed
     * out) before its reply arrived. An error the server answered with means it did not.
     */
    public static boolean outcomeUnknown(SQLException e) {
        String state = e.getSQLState();
        return state == null || state.isEmpty() || connectionLost(e);
    }

    public static LockBackendException translate(PgSettings settings, String action, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String where = "PostgreSQL at " + settings.endpoint + ": " + action + " failed";
        String detail = " (SQLSTATE " + (state.isEmpty() ? "none" : state) + "): " + e.getMessage();
        if (state.startsWith("28")) {
            return new LockBackendException(where + detail + "; check the user and password (URI, or PGPASSWORD)", false, e);
        }
        if (state.equals("42501")) {
            return new LockBackendException(where + detail + "; the role needs USAGE on the schema, SELECT/INSERT/UPDATE on "
                    + settings.table + " and " + settings.registry + " and USAGE on its sequence, or CREATE on the schema for the first run"
                    + " (see the README's DDL and grants for PostgreSQL)", false, e);
        }
        if (state.equals("3D000") || state.equals("3F000")) {
            return new LockBackendException(where + detail + "; create the database/schema or fix the URI", false, e);
        }
        boolean retriable = state.isEmpty() || state.startsWith("08") || state.startsWith("57") || state.startsWith("53")
                || state.startsWith("40") || state.equals("55P03") || state.equals("55006");
        return new LockBackendException(where + detail, retriable, e);
    }
}
