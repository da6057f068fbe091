package dev.latchkey.tck.backends;

import dev.latchkey.mem.MemStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;
import java.util.UUID;

/** The CAS contract on {@link MemStore}: clients of one test share a fresh named store. */
class MemConditionalStoreTest extends ConditionalStoreContract {
    private final String name = "tck-cas-" + UUID.randomUUID();

    @Override
    protected ConditionalStore newStore() {
        return MemStore.named(name);
    }

    @Override
    protected boolean wakesOnChange() {
        return true;
    }
}
