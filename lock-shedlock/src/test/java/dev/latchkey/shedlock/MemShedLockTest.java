package dev.latchkey.shedlock;

import java.util.UUID;

/** ShedLock's test kit on {@code mem://}. */
class MemShedLockTest extends ShedLockKit {
    private final String uri = "mem://shedlock-" + UUID.randomUUID();

    @Override
    protected String uri() {
        return uri;
    }
}
