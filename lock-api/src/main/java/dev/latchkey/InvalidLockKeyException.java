package dev.latchkey;

/** A key broke the key rules (1..512 UTF-8 bytes, no control characters). Raised before any I/O. */
public class InvalidLockKeyException extends LockException {
    private static final long serialVersionUID = 1L;

    public InvalidLockKeyException(String message) {
        super(message);
    }
}
