package dev.latchkey.gcs;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.StoreFaultContract;

/**
 * The fault contract on the GCS store, with the test server's one write per second to an object
 * on: its TTLs are three times that interval, and the random-fault contention runs fewer rounds
 * (one key changes hands about once every two seconds).
 */
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
