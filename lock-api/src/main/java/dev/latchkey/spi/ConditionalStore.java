package dev.latchkey.spi;

import dev.latchkey.LockBackendException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The compare-and-swap primitive the {@link dev.latchkey.engine.LeaseEngine} builds locks on: a
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
 * <p>Names come from {@link LockNames#encode} ({@code [a-z0-9_~-]}, at most 202 characters); a
 * store may prefix them but must not reinterpret them. Every method throws
 * {@link LockBackendException} when the store cannot answer; "lost the race" is not an error.
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

    /** Where the store is, for messages: endpoint, bucket, directory — never a credential. */
    String describe();

    @Override
    void close();
}
