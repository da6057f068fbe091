package dev.latchkey.postgres.shared;

import dev.latchkey.LockBackendException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

/**
 * The tables (the advisory mode's token sequence, and the schema's registry), created on first use,
 * and the registry check that keeps every client of a schema on one kind of lock.
 *
 * <p><b>Guarantee.</b> A lock is identified by (database, schema, key): the registry row of a schema
 * names the one mode and lock table its locks use, written by the first client (or a DBA's DDL) and
 * checked by every manager before its first lock operation. A client configured otherwise is
 * refused with an error naming both settings — so two clients of one key either exclude each other
 * or the second fails; they never both hold it. (Advisory lock ids are database-wide and fencing
 * tokens come from the table's sequence: a second mode or table in one schema would hold keys
 * another client holds too, or hand out tokens that go backwards.)
 *
 * <p>Creating is safe when many processes start at once: creators serialise on a
 * transaction-level advisory lock, because concurrent {@code CREATE TABLE IF NOT EXISTS} can still
 * fail on the catalog's unique index. A role without CREATE rights works as long as a DBA ran
 * {@link #ddl} beforehand: existing objects are detected first, so no DDL is attempted.
 */
public final class PgSchema {
    static final String REGISTRY_TABLE = "latchkey_registry";
    /** The two-int form lives in another lock space than the bigint ids of advisory mode. */
    private static final int DDL_LOCK_1 = 0x6c617463; // "latc"
    private static final int DDL_LOCK_2 = 0x686b6579; // "hkey"

    private PgSchema() {}

    public static String sequence(PgSettings s) {
        return s.schema + "." + PgSettings.quote(s.tableName + "_token_seq");
    }

    /** How {@code mode} is named in URIs and in the registry. */
    static String modeName(PgSettings.Mode mode) {
        return mode.name().toLowerCase(Locale.ROOT);
    }

    /** The DDL for this URI, as a DBA would run it: the lock table, and the registry claimed for it. */
    static String ddl(PgSettings s) {
        String lockTable;
        if (s.mode == PgSettings.Mode.ADVISORY) {
            lockTable = "CREATE TABLE IF NOT EXISTS " + s.table + " (\n"
                    + "  id          bigint PRIMARY KEY,  -- advisory lock id: first 8 bytes of SHA-256(key), see README\n"
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
        } else {
            lockTable = "CREATE TABLE IF NOT EXISTS " + s.table + " (\n"
                    + "  key         text PRIMARY KEY,\n"
                    + "  lease_id    text,                -- NULL once released\n"
                    + "  owner       text,\n"
                    + "  token       bigint NOT NULL,     -- fencing token: +1 per acquisition, kept on release\n"
                    + "  acquired_at timestamptz NOT NULL,\n"
                    + "  expires_at  timestamptz NOT NULL,-- server clock\n"
                    + "  metadata    text[]\n"
                    + ");\n";
        }
        return lockTable
                + "CREATE TABLE IF NOT EXISTS " + s.registry + " (\n"
                + "  singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),\n"
                + "  mode             text NOT NULL,   -- advisory | lease: the mode of every lock in this schema\n"
                + "  lock_table       text NOT NULL,   -- the one lock table of this schema\n"
                + "  max_ttl_ms       bigint NOT NULL DEFAULT 0, -- advisory: longest TTL ever used here\n"
                + "  timeline         integer,         -- advisory: WAL timeline last seen (another = failover)\n"
                + "  timeline_seen_at timestamptz      -- advisory: when that timeline was first seen\n"
                + ");\n"
                + claimSql(s) + ";\n";
    }

    private static String claimSql(PgSettings s) {
        return "INSERT INTO " + s.registry + " (mode, lock_table) VALUES ('" + modeName(s.mode) + "', '" + s.tableName
                + "') ON CONFLICT DO NOTHING";
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
        String check = "SELECT to_regclass('" + s.table + "') IS NOT NULL AND to_regclass('" + s.registry + "') IS NOT NULL"
                + (s.mode == PgSettings.Mode.ADVISORY ? " AND to_regclass('" + sequence(s) + "') IS NOT NULL" : "");
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(check)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /**
     * Checks that the schema's registry names this client's mode and table (claiming the schema
     * for them if nobody has yet) and returns the longest TTL recorded there.
     *
     * @throws LockBackendException (not retriable) naming both configurations when they differ
     */
    static long claim(Connection c, PgSettings s) throws SQLException {
        String read = "SELECT mode, lock_table, max_ttl_ms FROM " + s.registry;
        for (int attempt = 0; attempt < 2; attempt++) {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(read)) {
                if (rs.next()) {
                    String mode = rs.getString(1);
                    String table = rs.getString(2);
                    if (!mode.equals(modeName(s.mode)) || !table.equals(s.tableName)) throw mismatch(s, mode, table);
                    return rs.getLong(3);
                }
            }
            try (Statement st = c.createStatement()) {
                st.execute(claimSql(s)); // the first client of the schema; a racing one's row wins just as well
            }
        }
        throw new SQLException("the registry " + s.registry + " stays empty", "55000");
    }

    /** Records that a lease of {@code ttlMillis} is about to be taken; returns the longest TTL now recorded. */
    public static long recordTtl(Connection c, PgSettings s, long ttlMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + s.registry
                + " SET max_ttl_ms = greatest(max_ttl_ms, ?) RETURNING max_ttl_ms")) {
            ps.setLong(1, ttlMillis);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) throw new SQLException("the registry " + s.registry + " has no row", "55000");
                return rs.getLong(1);
            }
        }
    }

    private static LockBackendException mismatch(PgSettings s, String mode, String table) {
        return new LockBackendException("PostgreSQL at " + s.endpoint + ": schema " + s.schema + " holds the locks of mode="
                + mode + " (table " + table + "), but this client is configured with mode=" + modeName(s.mode) + " (table "
                + s.tableName + "). A lock is identified by its database, schema and key, and every client of a schema"
                + " must lock the same way, or they would not exclude each other: use mode=" + mode + "&table=" + table
                + " here, or schema=<another> for a separate set of locks", false);
    }
}
