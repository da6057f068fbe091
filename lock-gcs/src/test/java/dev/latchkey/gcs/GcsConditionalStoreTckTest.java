package dev.latchkey.gcs;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;

/**
 * The compare-and-swap contract (racing creators and replacers: exactly one wins) on GCS generation
 * preconditions, each client a separate GCS client.
 */
class GcsConditionalStoreTckTest extends ConditionalStoreContract {
    @Override
    protected ConditionalStore newStore() {
        return GcsFixture.newStore();
    }
}
