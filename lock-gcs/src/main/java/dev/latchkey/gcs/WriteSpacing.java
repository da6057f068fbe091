package dev.latchkey.gcs;

import com.google.cloud.storage.StorageException;
import dev.latchkey.LockException;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * GCS's per-object write rate, kept by one client: a write of an object starts no sooner than
 * {@link #MIN_INTERVAL} after the reply to this spacing's previous write of it that may have landed
 * (anything but 412 and 429, which applied nothing). GCS documents "maximum rate of writes to the
 * same object name: one write per second" and answers faster writes with {@code 429}; spacing by
 * reply times, not send times, is what keeps two writes a second apart at the storage, wherever
 * between send and reply each was applied. Safe for concurrent use; writes of different objects
 * never wait for each other.
 */
final class WriteSpacing {

    /** https://cloud.google.com/storage/quotas: "Maximum rate of writes to the same object name: one write per second". */
    static final Duration MIN_INTERVAL = Duration.ofSeconds(1);
    /** Objects whose last write is remembered, before those written over an interval ago are dropped. */
    private static final int MAX_TRACKED = 4096;

    /** When the reply to the last write of each object that may have landed arrived (monotonic). */
    private final ConcurrentHashMap<String, Long> lastWriteReply = new ConcurrentHashMap<>();

    /**
     * Runs {@code write} of {@code object} once the interval since its previous write has passed.
     *
     * @param where the object as messages name it, for an interrupted wait
     */
    <T> T spaced(String object, String where, Supplier<T> write) {
        Long last = lastWriteReply.get(object);
        if (last != null) {
            long wait = last + MIN_INTERVAL.toNanos() - System.nanoTime();
            if (wait > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new LockException("interrupted while spacing writes to " + where, e);
                }
            }
        }
        boolean mayHaveLanded = true;
        try {
            return write.get();
        } catch (StorageException e) {
            mayHaveLanded = !notWritten(e);
            throw e;
        } finally {
            if (mayHaveLanded) {
                long now = System.nanoTime();
                if (lastWriteReply.size() >= MAX_TRACKED) {
                    lastWriteReply.values().removeIf(t -> now - t >= MIN_INTERVAL.toNanos());
                }
                lastWriteReply.put(object, now);
            }
        }
    }

    /** 412: the precondition failed; 429: refused for the per-object write rate. Neither applied anything. */
    static boolean notWritten(StorageException e) {
        return e.getCode() == 412 || e.getCode() == 429;
    }
}
