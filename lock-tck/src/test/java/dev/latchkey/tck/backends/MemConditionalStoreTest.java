package dev.latchkey.tck.backends;

import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;
import java.util.UUID;

/** The CAS contract on {@link MemConditionalStore}: clients of one test share a fresh named store. */
class MemConditionalStoreTest extends ConditionalStoreContract {
    private final String name = "tck-cas-" + UUID.randomUUID();

    @Override
    protected ConditionalStore newStore() {
        return MemConditionalStore.named(name);
    }

    @Override
    protected boolean wakesOnChange() {
        return true;
    }
}
