package dev.latchkey.cli;

/**
 * Exit statuses of {@code latchkey}, stable for scripts (the same table is in {@code --help}).
 * Chosen from {@code sysexits.h} where one fits, and like a shell for a command that could not
 * run or died of a signal; {@code run} otherwise exits with its command's own status.
 */
final class ExitCodes {
    static final int OK = 0;
    /** An operation the backend cannot do (e.g. {@code list} without the LIST capability), or another lock error. */
    static final int FAILURE = 1;
    /** Bad arguments, bad or unknown URI, invalid key or duration. */
    static final int USAGE = 2;
    /** The store could not be reached or refused us ({@code LockBackendException}); EX_UNAVAILABLE. */
    static final int UNAVAILABLE = 69;
    /** A bug in latchkey itself; EX_SOFTWARE. */
    static final int SOFTWARE = 70;
    /** The lock stayed busy for the whole {@code --wait}; EX_TEMPFAIL, so retry later. */
    static final int BUSY = 75;
    /** The lease was lost while the command ran; the command was terminated. */
    static final int LEASE_LOST = 76;
    /** The command exists but could not be executed, as in a shell. */
    static final int CANNOT_EXECUTE = 126;
    /** The command was not found, as in a shell. */
    static final int NOT_FOUND = 127;

    private ExitCodes() {}
}
