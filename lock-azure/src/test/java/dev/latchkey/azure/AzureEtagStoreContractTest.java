package dev.latchkey.azure;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;

/** The CAS contract (racing creates and replaces) on ETag conditional uploads against Azurite. */
class AzureEtagStoreContractTest extends ConditionalStoreContract {
    @Override
    protected ConditionalStore newStore() {
        return Azurite.newStore();
    }
}
