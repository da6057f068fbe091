package dev.latchkey;

/**
 * The store could not be reached or answered in a way the backend does not accept. The message
 * names the endpoint (never a credential). {@link #isRetriable()} says whether trying again later
 * may help (timeouts, refused connections, 5xx) or not (permissions, missing bucket, bad schema).
 */
public class LockBackendException extends LockException {
    private static final long serialVersionUID = 1L;

    private final boolean retriable;

    public LockBackendException(String message, boolean retriable, Throwable cause) {
        super(message, cause);
        this.retriable = retriable;
    }

    public LockBackendException(String message, boolean retriable) {
        this(message, retriable, null);
    }

    public boolean isRetriable() {
        return retriable;
    }
}
