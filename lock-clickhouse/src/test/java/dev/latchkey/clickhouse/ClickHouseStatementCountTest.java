package dev.latchkey.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How many statements the hot paths send, counted by the server itself ({@code system.events}:
 * {@code Query}, {@code InsertQuery}, {@code InsertedRows}) on a server of its own, so no other
 * test's statements are counted. Each count read is itself a query, which the next read includes:
 * a window between two reads holds exactly one of them. Counts only, no timing.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClickHouseStatementCountTest {
    @RegisterExtension
    static final ClickHouseTestServer.PrivateServer server = new ClickHouseTestServer.PrivateServer();

    /** Server counters since it started: queries, inserts, rows inserted. */
    private record Counts(long queries, long inserts, long rows) {
        static Counts read() {
            String[] v = ClickHouseTestServer.sql(server.uri(), "SELECT sumIf(value, event = 'Query'), sumIf(value, event = 'InsertQuery'), "
                    + "sumIf(value, event = 'InsertedRows') FROM system.events").split("\t");
            return new Counts(Long.parseLong(v[0]), Long.parseLong(v[1]), Long.parseLong(v[2]));
        }

        /** What was sent between {@code before} and this read, without this read itself. */
        Counts since(Counts before) {
            return new Counts(queries - before.queries - 1, inserts - before.inserts, rows - before.rows);
        }
    }

    /**
     * Uncontended: a conditional candidate insert, the verify read after the settle window, and the
     * conditional tombstone — three statements, two of them inserts, one row each. (It was four: a
     * read before the insert.) A held key costs one statement that writes nothing.
     */
    @Test
    void acquireAndReleaseAreThreeStatementsAndABusyKeyIsOne() throws Exception {
        LeaseOptions options = LeaseOptions.defaults().withoutHeartbeat();
        try (LockManager holder = Latchkey.open(server.uri() + "?table=counted&settle=20ms");
             LockManager contender = Latchkey.open(server.uri() + "?table=counted&settle=20ms")) {
            holder.tryAcquire("warm-up", options).orElseThrow().release(); // the first call may load what it needs
            for (int round = 0; round < 3; round++) {
                Counts before = Counts.read();
                Lease lease = holder.tryAcquire("job", options).orElseThrow();
                lease.release();
                assertThat(Counts.read().since(before)).as("acquire+release of a free key, round %s", round)
                        .isEqualTo(new Counts(3, 2, 2));
            }

            Lease held = holder.tryAcquire("job", options).orElseThrow();
            Counts before = Counts.read();
            assertThat(contender.tryAcquire("job", options)).isEmpty();
            assertThat(Counts.read().since(before)).as("tryAcquire of a held key").isEqualTo(new Counts(1, 1, 0));
            held.release();
        }
    }
}
