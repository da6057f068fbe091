package dev.latchkey.spi;

import dev.latchkey.LockBackendException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The compare-and-swap primitive the {@link dev.latchkey.engine.ConditionalStoreLockManager} builds locks on: a
 * map from names to small byte records, each with an opaque version that changes on every write.
 * Object stores implement it with conditional writes (S3 {@code If-None-Match}/{@code If-Match},
 * GCS {@code ifGenerationMatch}, Azure ETags); {@code mem://} and {@code file://} natively.
 *
 * <p><b>The one rule:</b> {@link #create} and {@link #replace} are atomic. Of any number of
 * concurrent creates of one absent name, exactly one succeeds; of any number of concurrent
 * replaces expecting one version, at most one succeeds. The TCK's CAS contract races exactly this.
 * And a version, once replaced or deleted, never matches other data under that name again — not
 * after a delete and re-create either. Counters, random tokens, GCS generations, Azure ETags qualify;
 * so do content hashes such as S3 ETags, because every lease record carries a random lease id.
 *
 * <p><b>Empty means "not written".</b> {@link #create} and {@link #replace} answer empty when the
 * write did not land: the condition failed, <em>or</em> the store refused the write without
 * applying it (a conflicting request in flight — AWS S3's 409 — or throttling: GCS's 429 for more
 * than about one write per second to an object). The engine never concludes from an empty answer
 * alone that someone else wrote: it reads the record and decides. A store must not answer empty for
 * a write that may still land later; that is an exception (the outcome is unknown).
 *
 * <p>Names come from {@link LockNames#encode} ({@code [a-z0-9_~-]}, at most 202 characters); a
 * store may prefix them but must not reinterpret them. Every method throws
 * {@link LockBackendException} when the store cannot answer (or the outcome of a write is unknown:
 * a timeout, a lost reply); "lost the race" is not an error.
 */
public interface ConditionalStore extends AutoCloseable {

    /** The record under {@code name}, or empty if there is none. */
    Optional<StoredRecord> read(String name);

    /** Writes {@code data} only if {@code name} is absent; returns the new version, or empty if it exists. */
    Optional<String> create(String name, byte[] data);

    /**
     * Writes {@code data} only if the current version is {@code expectedVersion}; returns the new
     * version, or empty if the record changed or is gone.
     */
    Optional<String> replace(String name, String expectedVersion, byte[] data);

    /** Deletes only if the current version is {@code expectedVersion}; false if it changed or is gone. */
    boolean delete(String name, String expectedVersion);

    /** Names starting with {@code namePrefix}, in any order. */
    List<String> list(String namePrefix);

    /**
     * Blocks until {@code name} may have changed from {@code version}, or {@code max} has passed.
     * The default sleeps; a store that can be told of changes returns early.
     */
    default void awaitChange(String name, String version, Duration max) throws InterruptedException {
        Thread.sleep(Math.max(1, max.toMillis()));
    }

    /**
     * The fencing token for the acquisition after one that had {@code previous}: greater than
     * {@code previous} and than every token this store's records ever carried, also after a crash
     * that lost recent writes. The default, {@code previous + 1}, suits stores whose acknowledged
     * writes survive crashes (every server store); a store that acknowledges before its writes are
     * durable (a local directory without fsync) reserves tokens durably here.
     */
    default long nextToken(long previous) {
        return previous + 1;
    }

    /**
     * The shortest interval at which one client should write one record (GCS: one second). The
     * engine spaces its own writes to a name by it and refuses heartbeats faster than it. Default zero.
     */
    default Duration minWriteInterval() {
        return Duration.ZERO;
    }

    /**
     * Whether this store can tell that a holder's process died ({@link HolderLiveness}); a store
     * that wraps another forwards the wrapped one's.
     */
    default Optional<HolderLiveness> holderLiveness() {
        return this instanceof HolderLiveness h ? Optional.of(h) : Optional.empty();
    }

    /** Where the store is, for messages: endpoint, bucket, directory — never a credential. */
    String describe();

    @Override
    void close();
}
