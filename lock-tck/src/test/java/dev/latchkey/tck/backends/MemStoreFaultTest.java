package dev.latchkey.tck.backends;

import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.StoreFaultContract;
import java.util.UUID;

/** The fault contract on {@link MemConditionalStore}: clients of one test share a fresh named store. */
class MemStoreFaultTest extends StoreFaultContract {
    private final String name = "tck-faults-" + UUID.randomUUID();

    @Override
    protected ConditionalStore newStore() {
        return MemConditionalStore.named(name);
    }
}
