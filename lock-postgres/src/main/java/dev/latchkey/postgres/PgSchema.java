package dev.latchkey.postgres;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The tables (and the advisory mode's token sequence), created on first use. Safe when many
 * processes start at once: creators serialise on a transaction-level advisory lock, because
 * concurrent {@code CREATE TABLE IF NOT EXISTS} can still fail on the catalog's unique index. A
 * role without CREATE rights works as long as a DBA ran {@link #ddl} beforehand: existing objects
 * are detected first, so no DDL is attempted.
 */
final class PgSchema {
    /** The two-int form lives in another lock space than the bigint ids of advisory mode. */
    private static final int DDL_LOCK_1 = 0x6c617463; // "latc"
    private static final int DDL_LOCK_2 = 0x686b6579; // "hkey"

    private PgSchema() {}

    static String sequence(PgSettings s) {
        return s.schema + "." + PgSettings.quote(s.tableName + "_token_seq");
    }

    /** The DDL for this URI, as a DBA would run it. */
    static String ddl(PgSettings s) {
        if (s.mode == PgSettings.Mode.ADVISORY) {
            return "CREATE TABLE IF NOT EXISTS " + s.table + " (\n"
                    + "  id          bigint PRIMARY KEY,  -- advisory lock id: first 8 bytes of SHA-256(key)\n"
                    + "  key         text NOT NULL,       -- recorded to detect hash collisions\n"
                    + "  owner       text,\n"
                    + "  lease_id    text,\n"
                    + "  token       bigint,\n"
                    + "  pid         integer,             -- backend pid of the holding session\n"
                    + "  acquired_at timestamptz,\n"
                    + "  ttl_ms      bigint,\n"
                    + "  metadata    text[]               -- name, value, name, value, ...\n"
                    + ");\n"
                    + "CREATE SEQUENCE IF NOT EXISTS " + sequence(s) + ";\n";
        }
        return "CREATE TABLE IF NOT EXISTS " + s.table + " (\n"
                + "  key         text PRIMARY KEY,\n"
                + "  lease_id    text,                -- NULL once released\n"
                + "  owner       text,\n"
                + "  token       bigint NOT NULL,     -- fencing token: +1 per acquisition, kept on release\n"
                + "  acquired_at timestamptz NOT NULL,\n"
                + "  expires_at  timestamptz NOT NULL,-- server clock\n"
                + "  metadata    text[]\n"
                + ");\n";
    }

    /** Creates what is missing; does nothing (and needs no CREATE right) when all exists. */
    static void ensure(Connection c, PgSettings s) throws SQLException {
        if (exists(c, s)) return;
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_advisory_xact_lock(" + DDL_LOCK_1 + ", " + DDL_LOCK_2 + ")");
            if (!s.schemaName.equals("public")) st.execute("CREATE SCHEMA IF NOT EXISTS " + s.schema);
            for (String stmt : ddl(s).split(";\n")) {
                if (!stmt.isBlank()) st.execute(stmt);
            }
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(auto);
        }
    }

    private static boolean exists(Connection c, PgSettings s) throws SQLException {
        String check = "SELECT to_regclass('" + s.table + "') IS NOT NULL"
                + (s.mode == PgSettings.Mode.ADVISORY ? " AND to_regclass('" + sequence(s) + "') IS NOT NULL" : "");
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(check)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
