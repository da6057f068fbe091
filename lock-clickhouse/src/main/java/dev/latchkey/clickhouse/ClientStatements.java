package dev.latchkey.clickhouse;

import com.clickhouse.client.api.Client;
import com.clickhouse.client.api.ClientConfigProperties;
import com.clickhouse.client.api.ClientFaultCause;
import com.clickhouse.client.api.command.CommandSettings;
import com.clickhouse.client.api.data_formats.ClickHouseBinaryFormatReader;
import com.clickhouse.client.api.query.QueryResponse;
import com.clickhouse.client.api.query.QuerySettings;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The statements of one manager over a client-v2 {@link Client}: the one
 * {@link ClickHouseSettings#newClient()} builds, or the application's ({@link ClickHouseLocks}),
 * with what {@link ClickHouseStatements} promises of every request set on each request, whatever the
 * client's own configuration: no retry ({@code client_retry_on_failures} empty), {@code async_insert=0},
 * a wait for a pooled connection and for the reply of at most the limits' wait, parameters as the
 * client's query parameters. The client's connect timeout stays its own.
 *
 * <p>The request settings are built once per wait and never changed afterwards: the client copies
 * them into each request, so one instance serves every thread. Replies are read straight from the
 * client's binary reader, row by row, without a map per row.
 */
final class ClientStatements implements ClickHouseStatements {
    private record ClientLimits(CommandSettings settings) implements Limits {}

    private final ClickHouseSettings settings;
    private final Client client;
    /** Whether {@link #close} closes the client: only one we built; never the application's. */
    private final boolean ownsClient;
    private final QuerySettings readLimits;
    private final ClientLimits statementLimits;

    ClientStatements(ClickHouseSettings settings, Client client, boolean ownsClient) {
        this.settings = settings;
        this.client = client;
        this.ownsClient = ownsClient;
        this.readLimits = limited(new QuerySettings().waitEndOfQuery(true), settings.timeout());
        this.statementLimits = (ClientLimits) waitingAtMost(settings.timeout(), Map.of());
    }

    @Override
    public Limits waitingAtMost(Duration wait, Map<String, String> serverSettings) {
        CommandSettings request = limited(new CommandSettings(), wait);
        serverSettings.forEach(request::serverSetting);
        return new ClientLimits(request);
    }

    /** {@code request} with the protocol's limits (see the class comment), waiting at most {@code wait}. */
    private <T extends QuerySettings> T limited(T request, Duration wait) {
        long millis = ClickHouseStatements.waitMillis(settings, wait);
        request.setNetworkTimeout(millis, ChronoUnit.MILLIS);
        request.setOption(ClientConfigProperties.CONNECTION_REQUEST_TIMEOUT.getKey(), millis);
        request.setOption(ClientConfigProperties.CLIENT_RETRY_ON_FAILURE.getKey(), List.of(ClientFaultCause.None));
        request.serverSetting("async_insert", "0");
        // Replies are a few hundred bytes: LZ4 framing (the client's default) costs the server a
        // compression and the client a 300 kB buffer per reply, and saves nothing.
        request.setOption(ClientConfigProperties.COMPRESS_SERVER_RESPONSE.getKey(), false);
        return request;
    }

    /** Not {@code queryAll}: it builds the request settings twice and a map per row. */
    @Override
    public <T> List<T> query(String what, String sql, Map<String, Object> params, Function<Row, T> row) {
        try (QueryResponse r = client.query(sql, ClickHouseStatements.escaped(params), readLimits).get();
             ClickHouseBinaryFormatReader reader = client.newBinaryFormatReader(r)) {
            Row current = new Row() {
                @Override public String string(String column) { return reader.getString(column); }
                @Override public long number(String column) { return reader.getLong(column); }
            };
            List<T> out = new ArrayList<>();
            while (reader.hasNext()) {
                reader.next();
                out.add(row.apply(current));
            }
            return out;
        } catch (Exception e) {
            throw ClickHouseStatements.failure(settings, what, e);
        }
    }

    @Override
    public long execute(String what, String sql, Map<String, Object> params) {
        return execute(what, sql, params, statementLimits);
    }

    @Override
    public long execute(String what, String sql, Map<String, Object> params, Limits limits) {
        // query(), not execute(): execute() builds its reply on the common fork-join pool, a thread
        // hand-off per statement that a loaded machine makes slow; the summary header is the same.
        try (QueryResponse r = client.query(sql, ClickHouseStatements.escaped(params), ((ClientLimits) limits).settings()).get()) {
            return r.getWrittenRows();
        } catch (Exception e) {
            throw ClickHouseStatements.failure(settings, what, e);
        }
    }

    @Override
    public void close() {
        if (ownsClient) client.close();
    }
}
