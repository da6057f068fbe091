package dev.latchkey.tck.backends;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.util.UUID;

/** The lock contract on {@code mem://}: every manager of one test shares a fresh in-JVM store. */
class MemTckTest extends LockManagerContract {
    private final String store = "tck-" + UUID.randomUUID();

    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open("mem://" + store, context);
    }
}
