package dev.latchkey.postgres;

import dev.latchkey.LockManager;
import dev.latchkey.postgres.advisory.AdvisoryLockManager;
import dev.latchkey.postgres.lease.LeaseTableLockManager;
import dev.latchkey.postgres.shared.PgSettings;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.util.Set;

/**
 * {@code postgres://user[:password]@host[:port]/db?mode=advisory|lease&schema=…&table=…&<JDBC properties>}.
 * The password may also come from {@code PGPASSWORD}. The URI is validated completely before any
 * connection is made; connections open lazily, on the first lock operation. An application that
 * has configured its own {@code DataSource} opens a manager on it with {@link PostgresLocks}.
 */
public final class PostgresLockProvider implements LockProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("postgres", "postgresql");
    }

    @Override
    public String description() {
        return "PostgreSQL: session advisory locks (mode=advisory) or a lease table with server-clock expiry (mode=lease)";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        return open(PgSettings.parse(uri), context);
    }

    /** The one way a manager is made, from a URI or from an application's data source ({@link PostgresLocks}). */
    static LockManager open(PgSettings settings, LockContext context) {
        return settings.mode == PgSettings.Mode.ADVISORY
                ? new AdvisoryLockManager(settings, context)
                : new LeaseTableLockManager(settings, context);
    }
}
