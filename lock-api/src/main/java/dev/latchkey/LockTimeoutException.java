package dev.latchkey;

import java.time.Duration;
import java.util.Optional;

/** {@code acquire} waited its whole budget and the lock stayed held; names the holder when known. */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    private final String key;
    private final transient LockInfo holder;

    public LockTimeoutException(String key, Duration waited, LockInfo holder) {
        super(message(key, waited, holder));
        this.key = key;
        this.holder = holder;
    }

    private static String message(String key, Duration waited, LockInfo holder) {
        String who = holder == null ? "another holder" : holder.describeHolder();
        return "lock '" + key + "' is held by " + who + "; gave up after " + Durations.format(waited);
    }

    public String key() {
        return key;
    }

    /** The holder seen last, if the backend could tell. */
    public Optional<LockInfo> holder() {
        return Optional.ofNullable(holder);
    }
}
