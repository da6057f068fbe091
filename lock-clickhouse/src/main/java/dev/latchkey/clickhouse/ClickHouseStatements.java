package dev.latchkey.clickhouse;

import com.clickhouse.client.api.Client;
import com.clickhouse.client.api.ClientConfigProperties;
import com.clickhouse.client.api.ClientFaultCause;
import com.clickhouse.client.api.ServerException;
import com.clickhouse.client.api.command.CommandSettings;
import com.clickhouse.client.api.data_formats.ClickHouseBinaryFormatReader;
import com.clickhouse.client.api.query.QueryResponse;
import com.clickhouse.client.api.query.QuerySettings;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * The statements of one manager, over its client: the one {@link ClickHouseSettings#newClient()}
 * builds, or the application's ({@link ClickHouseLocks}). Every request carries the limits the
 * protocol rests on, whatever the client's own configuration: no client-side retry (a blind retry of
 * an INSERT could land after the settle window), synchronous inserts ({@code async_insert=0}), and
 * every wait — for a pooled connection and for the reply — bounded by {@code timeout}. Every failure surfaces as a
 * {@link LockBackendException} that names the endpoint (never a credential) and what was being
 * done, retriable unless the server's error code says that retrying cannot help (unknown table,
 * syntax, authentication, permissions). Parameters are always bound, never spliced.
 *
 * <p>The request settings are built once per wait and never changed afterwards: the client copies
 * them into each request, so one instance serves every thread. Replies are read straight from the
 * client's binary reader, row by row, without a map per row.
 */
final class ClickHouseStatements implements AutoCloseable {
    private static final Set<Integer> PERMANENT_ERRORS = Set.of(
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

    private final ClickHouseSettings settings;
    private final Client client;
    /** Whether {@link #close} closes the client: only one we built; never the application's. */
    private final boolean ownsClient;
    /** The limits of a read and of a statement that wait up to {@code timeout}; read-only once built. */
    private final QuerySettings readLimits;
    private final CommandSettings statementLimits;

    ClickHouseStatements(ClickHouseSettings settings, Client client, boolean ownsClient) {
        this.settings = settings;
        this.client = client;
        this.ownsClient = ownsClient;
        // the whole reply before its first byte, as queryAll asks: an error cannot arrive mid-stream
        this.readLimits = limited(new QuerySettings().waitEndOfQuery(true), settings.timeout());
        this.statementLimits = waitingAtMost(settings.timeout());
    }

    /**
     * Limits of one request that waits at most {@code wait} (and never more than {@code timeout})
     * for a pooled connection and for its reply; connecting keeps the client's own connect timeout.
     * Build it once per wait and do not change it while requests use it.
     */
    CommandSettings waitingAtMost(Duration wait) {
        return limited(new CommandSettings(), wait);
    }

    /** {@code request} with the protocol's limits (see the class comment), waiting at most {@code wait}. */
    private <T extends QuerySettings> T limited(T request, Duration wait) {
        long millis = Math.max(1, Math.min(settings.timeout().toMillis(), wait.toMillis()));
        request.setNetworkTimeout(millis, ChronoUnit.MILLIS);
        request.setOption(ClientConfigProperties.CONNECTION_REQUEST_TIMEOUT.getKey(), millis);
        request.setOption(ClientConfigProperties.CLIENT_RETRY_ON_FAILURE.getKey(), List.of(ClientFaultCause.None));
        request.serverSetting("async_insert", "0");
        // Replies are a few hundred bytes: LZ4 framing (the client's default) costs the server a
        // compression and the client a 300 kB buffer per reply, and saves nothing.
        request.setOption(ClientConfigProperties.COMPRESS_SERVER_RESPONSE.getKey(), false);
        return request;
    }

    /**
     * Runs a read and maps each row of its reply with {@code row}, which reads the current row's
     * columns from the reader. (Not {@code queryAll}: it builds the request settings twice and a
     * map per row.)
     */
    <T> List<T> query(String what, String sql, Map<String, Object> params, Function<ClickHouseBinaryFormatReader, T> row) {
        try (QueryResponse r = client.query(sql, escaped(params), readLimits).get();
             ClickHouseBinaryFormatReader reader = client.newBinaryFormatReader(r)) {
            List<T> out = new ArrayList<>();
            while (reader.hasNext()) {
                reader.next();
                out.add(row.apply(reader));
            }
            return out;
        } catch (Exception e) {
            throw failure(what, e);
        }
    }

    /** Runs a statement with the client's limits; returns the rows it wrote. */
    long execute(String what, String sql, Map<String, Object> params) {
        return execute(what, sql, params, statementLimits);
    }

    long execute(String what, String sql, Map<String, Object> params, CommandSettings commandSettings) {
        // query(), not execute(): execute() builds its reply on the common fork-join pool, a thread
        // hand-off per statement that a loaded machine makes slow; the summary header is the same.
        try (QueryResponse r = client.query(sql, escaped(params), commandSettings).get()) {
            return r.getWrittenRows();
        } catch (Exception e) {
            throw failure(what, e);
        }
    }

    @Override
    public void close() {
        if (ownsClient) client.close();
    }

    /**
     * The server parses query-parameter values in its escaped text format, where a backslash starts
     * an escape sequence; the client passes strings as they are, so a key such as {@code a\n} would
     * arrive as "a", newline. Doubling every backslash makes every string arrive verbatim.
     */
    private static Map<String, Object> escaped(Map<String, Object> params) {
        Map<String, Object> out = new HashMap<>(params.size() * 2);
        params.forEach((k, v) -> out.put(k, v instanceof String ? ((String) v).replace("\\", "\\\\") : v));
        return out;
    }

    /** What a request's failure surfaces as (see the class comment). */
    private LockException failure(String what, Exception e) {
        if (e instanceof LockException lockException) return lockException;
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return new LockBackendException("interrupted during " + what + " at ClickHouse " + settings.endpoint(), false, e);
        }
        if (e instanceof ExecutionException && e.getCause() != null) return backendError(what, e.getCause());
        return backendError(what, e);
    }

    private LockBackendException backendError(String what, Throwable e) {
        boolean retriable = true;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ServerException && PERMANENT_ERRORS.contains(((ServerException) t).getCode())) retriable = false;
        }
        return new LockBackendException("ClickHouse at " + settings.endpoint() + ": " + what + " failed: " + e.getMessage(),
                retriable, e);
    }
}
