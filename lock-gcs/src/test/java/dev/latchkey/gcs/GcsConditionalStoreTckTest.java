package dev.latchkey.gcs;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The compare-and-swap contract (racing creators and replacers: exactly one wins) on GCS generation
 * preconditions, each client a separate GCS client, with the test server's one write per second to
 * an object on. The clients keep that interval among themselves ({@link IntervalKeepingClients}),
 * so each race round on one record waits a second; fewer rounds than the default 200 keep that to
 * about half a minute.
 *
 * <p>The tests run concurrently: each has its own records and clients, and most of their time is
 * the test server's pace of one write per second to an object.
 */
@Execution(ExecutionMode.CONCURRENT)
class GcsConditionalStoreTckTest extends ConditionalStoreContract {
    /** Clients of one test: a new contract instance per test, so the spacing starts afresh. */
    private final IntervalKeepingClients clients = new IntervalKeepingClients();

    @Override
    protected ConditionalStore newStore() {
        return clients.wrap(GcsFixture.newStore());
    }

    @Override
    protected int raceRounds() {
        return 25;
    }
}
