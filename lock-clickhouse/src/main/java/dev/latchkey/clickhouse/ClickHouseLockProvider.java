package dev.latchkey.clickhouse;

import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.util.Set;

/**
 * {@code clickhouse://user:password@host:8123/database?table=…&stale=300s&settle=1s&timeout=5s&ssl=true}:
 * an advisory insert-then-verify lock in a ClickHouse table (see {@link ClickHouseLockManager} for
 * what it guarantees). The URI is validated before any I/O; secrets never appear in messages. An
 * application that has configured its own {@code Client} or JDBC {@code DataSource} opens a manager on it
 * with {@link ClickHouseLocks}.
 */
public final class ClickHouseLockProvider implements LockProvider {

    @Override
    public Set<String> schemes() {
        return Set.of("clickhouse");
    }

    @Override
    public String description() {
        return "ClickHouse lock table: insert-then-verify with a settle window, server-clock expiry, TTL backstop";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        ClickHouseSettings settings = ClickHouseSettings.from(uri);
        return new ClickHouseLockManager(settings, new ClientStatements(settings, settings.newClient(), true), context);
    }
}
