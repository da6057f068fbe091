package dev.latchkey.postgres.shared;

import java.lang.System.Logger.Level;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutorBase;

/**
 * The one place that reaches into PgJDBC's internals (42.7): {@code PGStream.hasMessagePending},
 * which {@code PGConnection.getNotifications()} calls to see whether the server sent anything, does
 * a 1 ms blocking read of the socket when nothing is buffered — once a second per connection, as
 * throttled by {@code nextStreamAvailableCheckTime}, a throttle not armed when that read times out.
 * Arming it for good on a session reduces the check to what has already arrived (the driver's
 * buffer, then the socket's {@code available()}): a look that never blocks. Best effort: returns
 * false, changing nothing, where the driver differs.
 */
public final class PgDriver {
    private static final System.Logger LOG = System.getLogger(PgDriver.class.getName());

    private PgDriver() {}

    /** Makes {@code getNotifications()} on {@code c} read only what has arrived, never waiting 1 ms for more. */
    public static boolean skipPeek(Connection c) {
        try {
            Object executor = c.unwrap(BaseConnection.class).getQueryExecutor();
            Field streamField = QueryExecutorBase.class.getDeclaredField("pgStream");
            streamField.setAccessible(true);
            Object stream = streamField.get(executor);
            Field next = PGStream.class.getDeclaredField("nextStreamAvailableCheckTime");
            next.setAccessible(true);
            next.setLong(stream, Long.MAX_VALUE);
            return true;
        } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
            LOG.log(Level.DEBUG, "cannot switch off PgJDBC's 1 ms read for pending messages on this driver", e);
            return false;
        }
    }
}
