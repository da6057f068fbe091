package dev.latchkey;

/**
 * Root of every exception Latchkey throws. Unchecked: a lock failure is rarely something the
 * immediate caller can fix, and each subtype says what to do about it.
 */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LockException(String message) {
        super(message);
    }

    public LockException(String message, Throwable cause) {
        super(message, cause);
    }
}
