package dev.latchkey.gcs.testserver;

/** An answer of the {@link GcsTestServer} that is not 2xx, with GCS's error reason. */
final class GcsError extends Exception {
    private static final long serialVersionUID = 1L;
    final int code;
    final String reason;

    GcsError(int code, String reason, String message) {
        super(message, null, false, false);
        this.code = code;
        this.reason = reason;
    }
}
