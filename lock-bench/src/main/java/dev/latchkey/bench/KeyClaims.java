package dev.latchkey.bench;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The K keys of one baseline object under contention, for a floor whose primitive is not a lock
 * (an upload, a commit): a round {@linkplain #round claims} its key in memory before its work and
 * gives it back after, so a key another session claimed is busy, as a held key is for the lock,
 * and no two threads ever work on one key's object or row at once (which would measure the store's
 * queueing on that object instead of the primitive). The sessions of one object share one
 * instance; claims are this JVM's only.
 */
public final class KeyClaims {
    private final Set<Integer> claimed = ConcurrentHashMap.newKeySet();

    /** A round's work on its claimed key. */
    public interface Work<E extends Exception> {
        void run() throws E;
    }

    /**
     * Claims {@code key}, runs {@code work} and gives the key back (also when {@code work} throws):
     * {@code true}; {@code false}, having run nothing, when another thread holds the claim.
     */
    public <E extends Exception> boolean round(int key, Work<E> work) throws E {
        if (!claimed.add(key)) return false;
        try {
            work.run();
        } finally {
            claimed.remove(key);
        }
        return true;
    }
}
