package dev.latchkey.clickhouse;

import dev.latchkey.bench.Baseline;
import dev.latchkey.spi.LockUri;
import java.util.List;
import java.util.Map;

/**
 * Floor of {@code clickhouse://} for {@code latchkey bench}: one {@code SELECT 1} round trip over a
 * client built exactly as the backend builds its own ({@link ClickHouseSettings#newClient()}: same
 * endpoint, credentials, timeouts, retries and session settings), sent and read the way the backend
 * reads its lock rows ({@link ClientStatements#query}, with the same request limits). Acquire is that round trip; release does nothing. So the backend's
 * acquire+release, divided by this, says how many round trips (plus the settle window) a lock
 * costs on this server.
 *
 * <p>Under contention every thread's round is that one round trip on its own client, whatever the
 * key: nothing is locked, so nothing is ever busy.
 *
 * <p>Bench code: compiled from lock-clickhouse's {@code src/bench} into lock-bench-peers and
 * lock-clickhouse's own tests (found through {@code META-INF/services/dev.latchkey.bench.Baseline}
 * there), never into the lock-clickhouse jar. It touches no table and prints no credentials.
 */
public final class ClickHouseBaseline implements Baseline {

    @Override
    public boolean supports(String scheme) {
        return new ClickHouseLockProvider().schemes().contains(scheme);
    }

    @Override
    public Kind kind() {
        return Kind.FLOOR;
    }

    @Override
    public String description() {
        return "SELECT 1 round trip";
    }

    @Override
    public boolean hasSpread(LockUri uri) {
        return true;
    }

    @Override
    public Session open(LockUri uri) {
        ClickHouseSettings settings = ClickHouseSettings.from(uri);
        ClickHouseStatements sql = new ClientStatements(settings, settings.newClient(), true);
        return new Session() {
            @Override
            public void acquire() {
                List<Long> rows = sql.query("SELECT 1", "SELECT 1 AS one", Map.of(), r -> r.number("one"));
                if (rows.size() != 1 || rows.get(0) != 1L) {
                    throw new IllegalStateException("SELECT 1 at ClickHouse " + settings.endpoint() + " returned " + rows.size()
                            + " rows");
                }
            }

            @Override
            public void release() {
                // the floor is one round trip: nothing to give back
            }

            @Override
            public boolean tryRound(int key) {
                acquire();
                return true;
            }

            @Override
            public void close() {
                sql.close();
            }
        };
    }
}
