package dev.latchkey.tck.backends;

import dev.latchkey.Capability;
import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.engine.LeaseEngine;
import dev.latchkey.mem.MemStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.EnumSet;
import java.util.UUID;

/** The lock contract on {@code mem://}: every manager of one test shares a fresh in-JVM store. */
class MemTckTest extends LockManagerContract {
    private final String store = "tck-" + UUID.randomUUID();

    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open("mem://" + store, context);
    }

    /** mem:// as its provider builds it, but with the engine's pauses between looks capped at {@code poll}. */
    @Override
    protected LockManager newManagerPollingEvery(Duration poll, LockContext context) {
        return new LeaseEngine(MemStore.named(store), context, EnumSet.of(Capability.NATIVE_WAIT), poll);
    }
}
