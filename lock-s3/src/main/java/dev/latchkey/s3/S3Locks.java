package dev.latchkey.s3;

import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.UriOptions;
import java.time.Duration;
import java.util.Objects;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Lock managers on the application's own {@link S3Client} (its credentials provider, region,
 * endpoint, HTTP client with proxy and TLS, metrics), beside the {@code s3://} URI route:
 * {@code S3Locks.open(s3, "my-bucket", S3Locks.options().prefix("locks"))}. The options are the
 * URI's own parameters, typed, validated by the same code; the manager is the one the URI opens, on
 * the given client, with the same guarantees ({@code docs/backends/s3.md}).
 *
 * <p>Every request the manager sends carries the URI route's limits, whatever the client was built
 * with: at most {@code maxAttempts} tries of at most {@code timeout} each, and a conditional write
 * retried only after a try known not to have been applied ({@link S3Clients}). The staleness
 * default follows the client: {@code server} without an endpoint override (AWS S3), else
 * {@code observed}. For S3-compatible stores, build the client as the URI route does where the store
 * needs it: {@code requestChecksumCalculation(WHEN_REQUIRED)} (many reject the SDK's default
 * checksum trailers), {@code forcePathStyle(true)}, and, with the URL-connection HTTP client,
 * {@code S3Configuration.builder().expectContinueEnabled(false).chunkedEncodingEnabled(false)}:
 * otherwise a refused conditional PUT over {@code http://} surfaces as "Error writing request body"
 * — an error the lease engine must resolve by reading, where it should be a plain lost race (safe,
 * but operations fail that should not).
 *
 * <p><b>Ownership.</b> {@link LockManager#close()} never closes the application's client.
 */
public final class S3Locks {
    /** How a record's age is judged: the URI's {@code staleness}. */
    public enum Staleness { SERVER, OBSERVED }

    private S3Locks() {}

    /** No option set: the URI's defaults (bucket root, timeout 3 s, 2 attempts, staleness per the client). */
    public static Options options() {
        return new Options();
    }

    /** A manager on {@code client}, locking in {@code bucket}, with the default context. */
    public static LockManager open(S3Client client, String bucket, Options options) {
        return open(client, bucket, options, LockContext.defaults());
    }

    /** A manager on {@code client}, locking in {@code bucket} (which must exist), with a context (clock). */
    public static LockManager open(S3Client client, String bucket, Options options, LockContext context) {
        return S3LockProvider.open(S3StoreFactory.storeOn(options.asUri(bucket), Objects.requireNonNull(client, "client"), true), context);
    }

    /** The URI's own parameters, typed; each is validated when the manager opens, as in a URI. */
    public static final class Options extends UriOptions<Options> {
        private Options() {}

        /** Where in the bucket the lock objects live (the URI's path; default the bucket's root). */
        public Options prefix(String prefix) {
            return path(prefix);
        }

        /** {@code timeout}: longest single try of a request (default 3 s). */
        public Options timeout(Duration timeout) {
            return set("timeout", timeout);
        }

        /** {@code maxAttempts}: most tries per request, 1..10 (default 2). */
        public Options maxAttempts(int attempts) {
            return set("maxAttempts", attempts);
        }

        /** {@code staleness}: server clocks ({@code Date − Last-Modified}) or a record observed unchanged for a TTL. */
        public Options staleness(Staleness staleness) {
            return set("staleness", staleness);
        }

        /** {@code probe}: check once on open that the store honours its preconditions (default true; {@link S3LockProvider}). */
        public Options probe(boolean probe) {
            return set("probe", probe);
        }

        LockUri asUri(String bucket) {
            return toUri("s3://" + Objects.requireNonNull(bucket, "bucket"));
        }
    }
}
