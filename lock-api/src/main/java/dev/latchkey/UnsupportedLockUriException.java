package dev.latchkey;

/** A lock URI could not be parsed, or no installed provider serves its scheme. */
public class UnsupportedLockUriException extends LockException {
    private static final long serialVersionUID = 1L;

    public UnsupportedLockUriException(String message) {
        super(message);
    }

    public UnsupportedLockUriException(String message, Throwable cause) {
        super(message, cause);
    }
}
