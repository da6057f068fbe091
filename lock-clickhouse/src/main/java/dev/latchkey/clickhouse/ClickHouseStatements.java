package dev.latchkey.clickhouse;

import com.clickhouse.client.api.ServerException;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * The statements of one manager, over one route to the server: the client-v2 {@code Client}
 * ({@link ClientStatements}: the URI's own, or the application's) or the application's JDBC
 * {@code DataSource} ({@link JdbcStatements}). The lock logic ({@link ClickHouseLockManager}) is
 * written once, against this seam; each route guarantees the same things of every request:
 * <ul>
 *   <li>no client-side retry (a blind retry of an INSERT could land after the settle window);
 *   <li>synchronous inserts ({@code async_insert=0});
 *   <li>a wait for the reply of at most the request's {@link Limits} (never more than
 *       {@code timeout}), and the server settings those limits carry;
 *   <li>reads answered only once the whole reply is in ({@code wait_end_of_query}), so an error cannot
 *       arrive mid-stream;
 *   <li>parameters bound by the server ({@code {name:Type}} in the SQL), never spliced into it;
 *   <li>every failure a {@link LockBackendException} that names the endpoint (never a credential)
 *       and what was being done, retriable unless the server's error code says that retrying cannot
 *       help (unknown table, syntax, authentication, permissions).
 * </ul>
 * A route that cannot carry one of these refuses to run the statement, never drops the setting.
 */
interface ClickHouseStatements extends AutoCloseable {

    /** The current row of a reply, by column name. */
    interface Row {
        String string(String column);

        long number(String column);
    }

    /** The limits of requests that wait at most a given time; built once per wait, read-only afterwards. */
    interface Limits {}

    /**
     * Limits of one request that waits at most {@code wait} (and never more than {@code timeout})
     * for a connection and for its reply, with {@code serverSettings} added to the protocol's own.
     */
    Limits waitingAtMost(Duration wait, Map<String, String> serverSettings);

    /** Runs a read with the {@code timeout} limits and maps each row of its reply with {@code row}. */
    <T> List<T> query(String what, String sql, Map<String, Object> params, Function<Row, T> row);

    /** Runs a statement with the {@code timeout} limits; returns the rows it wrote. */
    long execute(String what, String sql, Map<String, Object> params);

    long execute(String what, String sql, Map<String, Object> params, Limits limits);

    /** Closes what the route built (never the application's client or data source). */
    @Override
    void close();

    // ---- shared by both routes ------------------------------------------------------------------

    Set<Integer> PERMANENT_ERRORS = Set.of(
            16, // NO_SUCH_COLUMN_IN_TABLE
            47, // UNKNOWN_IDENTIFIER
            60, // UNKNOWN_TABLE
            62, // SYNTAX_ERROR
            81, // UNKNOWN_DATABASE
            164, // READONLY
            192, // UNKNOWN_USER
            194, // REQUIRED_PASSWORD (wrong password)
            497, // ACCESS_DENIED
            516); // AUTHENTICATION_FAILED

    /** The wait of a request: {@code wait}, at most {@code timeout}, at least 1 ms. */
    static long waitMillis(ClickHouseSettings settings, Duration wait) {
        return Math.max(1, Math.min(settings.timeout().toMillis(), wait.toMillis()));
    }

    /**
     * The server parses query-parameter values in its escaped text format, where a backslash starts
     * an escape sequence; both routes pass strings as they are, so a key such as {@code a\n} would
     * arrive as "a", newline. Doubling every backslash makes every string arrive verbatim.
     */
    static Map<String, Object> escaped(Map<String, Object> params) {
        Map<String, Object> out = new HashMap<>(params.size() * 2);
        params.forEach((k, v) -> out.put(k, v instanceof String ? ((String) v).replace("\\", "\\\\") : v));
        return out;
    }

    /** What a request's failure surfaces as (see the interface comment). */
    static LockException failure(ClickHouseSettings settings, String what, Exception e) {
        if (e instanceof LockException lockException) return lockException;
        // the JDBC driver wraps an interrupted wait in its SQLException: the interrupt is the caller's either way
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException) {
                Thread.currentThread().interrupt();
                return new LockBackendException("interrupted during " + what + " at ClickHouse " + settings.endpoint(), false, e);
            }
        }
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        boolean retriable = true;
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof ServerException server && PERMANENT_ERRORS.contains(server.getCode())) retriable = false;
            // the JDBC driver carries the server's code as the SQLException's vendor code
            if (t instanceof SQLException sql && PERMANENT_ERRORS.contains(sql.getErrorCode())) retriable = false;
        }
        return new LockBackendException("ClickHouse at " + settings.endpoint() + ": " + what + " failed: " + cause.getMessage(),
                retriable, cause);
    }
}
