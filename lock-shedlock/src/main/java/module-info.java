/** A ShedLock lock provider over any Latchkey {@code LockManager}: {@code LatchkeyLockProvider}. */
module dev.latchkey.shedlock {
    requires transitive dev.latchkey.api;
    requires transitive net.javacrumbs.shedlock.core;

    exports dev.latchkey.shedlock;
}
