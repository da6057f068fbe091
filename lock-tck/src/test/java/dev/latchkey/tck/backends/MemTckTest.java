package dev.latchkey.tck.backends;

import dev.latchkey.Capability;
import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import dev.latchkey.tck.ServerClock;
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

    /**
     * Not steppable: the "server" is this JVM's {@code MemConditionalStore}, which ages records on the JVM's
     * monotonic clock ({@code System.nanoTime()}, read by the store itself, not the context's
     * {@code TimeSource}), the very clock of every holder's own deadline. It has no wall clock to step,
     * and a step of it would move the holders' deadlines with it: no server-clock fault to model.
     */
    @Override
    protected ServerClock serverClock() {
        return ServerClock.notSteppable("mem://'s store ages records on this JVM's monotonic clock (System.nanoTime(),"
                + " read by MemConditionalStore itself, not the LockContext's TimeSource), the same clock as every holder's own"
                + " deadline: there is no separate server clock to step");
    }

    /** mem:// as its provider builds it, but with the engine's pauses between looks capped at {@code poll}. */
    @Override
    protected LockManager newManagerPollingEvery(Duration poll, LockContext context) {
        return new ConditionalStoreLockManager(MemConditionalStore.named(store), context, EnumSet.of(Capability.NATIVE_WAIT), poll);
    }
}
