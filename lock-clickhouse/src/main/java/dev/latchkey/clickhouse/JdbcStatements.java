package dev.latchkey.clickhouse;

import com.clickhouse.client.api.ClientConfigProperties;
import com.clickhouse.client.api.ClientFaultCause;
import com.clickhouse.client.api.query.QuerySettings;
import com.clickhouse.jdbc.StatementImpl;
import dev.latchkey.LockBackendException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The statements of one manager over the application's JDBC {@link DataSource} of ClickHouse's
 * driver ({@code com.clickhouse:clickhouse-jdbc} 0.10, a pool around it being fine), with what
 * {@link ClickHouseStatements} promises of every request set on each statement, whatever the
 * data source's URL and properties say. Each call borrows a connection, runs one {@link Statement}
 * and gives the connection back.
 *
 * <p><b>How each setting travels.</b> Plain JDBC cannot carry them (a query timeout in whole
 * seconds, no retry switch, no server settings, {@code ?} placeholders that the driver splices into
 * the text), so each statement is unwrapped to the driver's own {@link StatementImpl} and its
 * per-statement request settings ({@link StatementImpl#getLocalSettings()}, the client-v2
 * {@code QuerySettings} the driver sends the statement with) get what the client-v2 route sets:
 * the reply's wait as the network timeout, in milliseconds; the same wait for the connection
 * driver's own HTTP pool; {@code client_retry_on_failures} empty; {@code async_insert=0} and the
 * limits' other server settings; uncompressed replies; {@code wait_end_of_query} on reads; and the
 * parameters as {@code param_<name>} settings, which the HTTP interface binds to the SQL's
 * {@code {name:Type}} exactly as the client's query parameters. A statement that does not unwrap
 * to the driver's (another driver, an older one, a proxy that hides it) is refused with a
 * non-retriable {@link LockBackendException}, never run without these settings. JDBC escape
 * processing is off: the SQL has no JDBC escapes, and its {@code {name:Type}} are not ones.
 *
 * <p>The wait for a connection from the data source is the data source's own (HikariCP's
 * {@code connectionTimeout}); JDBC has no per-call bound for it. The data source is never closed
 * here: the application owns it.
 */
final class JdbcStatements implements ClickHouseStatements {
    private record JdbcLimits(long millis, Map<String, String> serverSettings) implements Limits {}

    private interface Work<T> {
        T run(Statement statement, String sql) throws SQLException;
    }

    private final ClickHouseSettings settings;
    private final DataSource dataSource;
    private final JdbcLimits statementLimits;

    JdbcStatements(ClickHouseSettings settings, DataSource dataSource) {
        this.settings = settings;
        this.dataSource = dataSource;
        this.statementLimits = (JdbcLimits) waitingAtMost(settings.timeout(), Map.of());
    }

    @Override
    public Limits waitingAtMost(Duration wait, Map<String, String> serverSettings) {
        return new JdbcLimits(ClickHouseStatements.waitMillis(settings, wait), Map.copyOf(serverSettings));
    }

    @Override
    public <T> List<T> query(String what, String sql, Map<String, Object> params, Function<Row, T> row) {
        return run(what, sql, params, statementLimits, true, (statement, text) -> {
            try (ResultSet rs = statement.executeQuery(text)) {
                Row current = new Row() {
                    @Override public String string(String column) { return get(() -> rs.getString(column)); }
                    @Override public long number(String column) { return get(() -> rs.getLong(column)); }
                };
                List<T> out = new ArrayList<>();
                while (rs.next()) out.add(row.apply(current));
                return out;
            }
        });
    }

    @Override
    public long execute(String what, String sql, Map<String, Object> params) {
        return execute(what, sql, params, statementLimits);
    }

    @Override
    public long execute(String what, String sql, Map<String, Object> params, Limits limits) {
        return run(what, sql, params, (JdbcLimits) limits, false, Statement::executeLargeUpdate);
    }

    /** Nothing to close: the data source is the application's. */
    @Override
    public void close() {}

    private <T> T run(String what, String sql, Map<String, Object> params, JdbcLimits limits, boolean read, Work<T> work) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            QuerySettings request = driverStatement(statement).getLocalSettings();
            request.setNetworkTimeout(limits.millis(), ChronoUnit.MILLIS);
            request.setOption(ClientConfigProperties.CONNECTION_REQUEST_TIMEOUT.getKey(), limits.millis());
            request.setOption(ClientConfigProperties.CLIENT_RETRY_ON_FAILURE.getKey(), List.of(ClientFaultCause.None));
            request.setOption(ClientConfigProperties.COMPRESS_SERVER_RESPONSE.getKey(), false);
            request.serverSetting("async_insert", "0");
            limits.serverSettings().forEach(request::serverSetting);
            if (read) request.waitEndOfQuery(true);
            ClickHouseStatements.escaped(params).forEach((name, value) -> request.serverSetting("param_" + name, String.valueOf(value)));
            statement.setEscapeProcessing(false);
            return work.run(statement, sql);
        } catch (UncheckedSqlException e) {
            throw ClickHouseStatements.failure(settings, what, e.getCause());
        } catch (Exception e) {
            throw ClickHouseStatements.failure(settings, what, e);
        }
    }

    /** The driver's statement under {@code statement}; refused (see the class comment) when there is none. */
    private StatementImpl driverStatement(Statement statement) throws SQLException {
        if (!statement.isWrapperFor(StatementImpl.class)) {
            throw new LockBackendException("ClickHouse at " + settings.endpoint() + ": the DataSource's statements ("
                    + statement.getClass().getName() + ") are not those of ClickHouse's JDBC driver com.clickhouse:clickhouse-jdbc"
                    + " 0.10 (" + StatementImpl.class.getName() + "), through which alone each request can carry what the lock"
                    + " rests on (no retry, async_insert=0, millisecond reply timeouts, server-bound parameters); refusing", false);
        }
        return statement.unwrap(StatementImpl.class);
    }

    private interface SqlGetter<T> {
        T get() throws SQLException;
    }

    private static <T> T get(SqlGetter<T> getter) {
        try {
            return getter.get();
        } catch (SQLException e) {
            throw new UncheckedSqlException(e);
        }
    }

    /** A column read's failure, through the row mapper (a {@link Function}), back to {@link #run}. */
    private static final class UncheckedSqlException extends RuntimeException {
        UncheckedSqlException(SQLException cause) {
            super(cause);
        }

        @Override
        public SQLException getCause() {
            return (SQLException) super.getCause();
        }
    }
}
