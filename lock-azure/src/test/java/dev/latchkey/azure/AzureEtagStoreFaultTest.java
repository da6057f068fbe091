package dev.latchkey.azure;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.StoreFaultContract;
import java.time.Duration;

/** The fault contract on the ETag store ({@code mode=etag}) against Azurite. */
class AzureEtagStoreFaultTest extends StoreFaultContract {
    @Override
    protected ConditionalStore newStore() {
        return Azurite.newStore();
    }

    /** Date and Last-Modified have one-second resolution, and ages are lowered by a second. */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }
}
