package dev.latchkey;

/**
 * What a backend can promise beyond the core contract (mutual exclusion, TTL, owner-only release).
 * The TCK runs the tests of each declared capability and reports the others as skipped.
 */
public enum Capability {
    /** Each acquisition of a key gets a token strictly greater than every earlier one for that key. */
    FENCING_TOKENS,
    /** Expiry is decided by the store's clock, not by observing a record unchanged for a TTL. */
    SERVER_SIDE_EXPIRY,
    /** {@link LockManager#list(String)} enumerates keys. */
    LIST,
    /** Waiters are woken by the store (or a server queue) on release rather than by polling alone. */
    NATIVE_WAIT,
    /** The store notices that a holder's process or session died and frees its locks at once. */
    HOLDER_DEATH_DETECTION,
    /** The backend offers the compare-and-swap primitive ({@code ConditionalStore}) the TCK races. */
    CONDITIONAL_STORE
}
