package dev.latchkey;

/**
 * The lease is no longer ours: it expired unrenewed, was taken over after its TTL, or was broken
 * by {@link LockManager#forceRelease}. Work done under it may have overlapped with the next holder;
 * stop, and do not write results that the lock was meant to protect.
 */
public class LeaseLostException extends LockException {
    private static final long serialVersionUID = 1L;

    public LeaseLostException(String message) {
        super(message);
    }

    public LeaseLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
