package dev.latchkey.gcs;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.StoreFaultContract;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The fault contract on the GCS store, with the test server's one write per second to an object
 * on: its TTLs are three times that interval, and the random-fault contention runs fewer rounds
 * (one key changes hands about once every two seconds).
 *
 * <p>The tests run concurrently: each has its own records and clients, and most of their time is
 * the test server's pace of one write per second to an object.
 */
@Execution(ExecutionMode.CONCURRENT)
class GcsStoreFaultTest extends StoreFaultContract {
    @Override
    protected ConditionalStore newStore() {
        return GcsFixture.newStore();
    }

    /** 8 sections on one key through random faults: about half a minute at two seconds each. */
    @Override
    protected int chaosRounds() {
        return 1;
    }
}
