package dev.latchkey.s3;

import java.time.Duration;
import java.util.function.Consumer;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.retries.api.RetryStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The two SDK clients of one {@link S3ConditionalStore}, over one HTTP client: one for reads
 * (GET, HEAD, LIST: idempotent, so retried after any transient failure, the SDK's standard way) and
 * one for conditional writes, which the SDK retries <em>only after an attempt known not to have been
 * applied</em> ({@link S3Answers#refused refused} or {@link S3Answers#neverSent never sent}).
 *
 * <p><b>Guarantee.</b> When a conditional write ends with a refusal (409, 503 {@code SlowDown},
 * 429), every attempt of it was refused, so the store may answer "not written": nothing of it can
 * land later. Any attempt with an unknown outcome (a timeout, another 5xx, a connection lost after
 * sending) ends the call at once with an exception, and the lease engine reads the record to learn
 * what happened. (The SDK's own default would retry such an attempt, and a refusal of the retry —
 * say 409 because the first attempt is still in flight — would then hide a write that may yet land.)
 *
 * <p><b>Time.</b> Each attempt is bounded by {@code timeout} (connect at most 2 s, then read), each
 * call by {@code attempts × timeout + 1 s} including the back-off between attempts (100 ms × 2ⁿ with
 * full jitter, 1 s × 2ⁿ after throttling): with the defaults (3 s, 2 attempts) one call ends within
 * 7 s, well inside the 12 s safety margin (TTL/5) of the default 60 s TTL, so a lease whose store
 * hangs learns it from an error, and retries, long before it turns invalid.
 *
 * <p><b>The application's client</b> ({@link S3Locks}): reads and writes both go through it, and
 * every request carries {@link #readLimits}/{@link #writeLimits} — the same per-attempt and per-call
 * timeouts, and the same two retry strategies (as a request-level plugin), so the guarantee above
 * holds whatever the client was built with. Such clients are the application's: {@link #close}
 * leaves them open.
 */
record S3Clients(S3Client reads, S3Client writes, SdkHttpClient http, AwsRequestOverrideConfiguration readLimits,
                 AwsRequestOverrideConfiguration writeLimits, boolean owned) implements AutoCloseable {
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration BASE_DELAY = Duration.ofMillis(100);
    private static final Duration THROTTLED_BASE_DELAY = Duration.ofSeconds(1);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(20);

    /**
     * @param common   endpoint, region, credentials and service settings, applied to both clients
     * @param timeout  per attempt
     * @param attempts at most this many attempts per call (1 = no retry)
     * @throws SdkClientException if the SDK cannot set up a client (e.g. no region)
     */
    static S3Clients build(Consumer<S3ClientBuilder> common, Duration timeout, int attempts) {
        SdkHttpClient http = UrlConnectionHttpClient.builder()
                .connectionTimeout(CONNECT_TIMEOUT.compareTo(timeout) < 0 ? CONNECT_TIMEOUT : timeout)
                .socketTimeout(timeout)
                .build();
        try {
            AwsRequestOverrideConfiguration none = AwsRequestOverrideConfiguration.builder().build();
            return new S3Clients(client(common, http, readRetries(attempts), timeout, attempts),
                    client(common, http, writeRetries(attempts), timeout, attempts), http, none, none, true);
        } catch (RuntimeException e) {
            http.close();
            throw e;
        }
    }

    /**
     * The application's {@code client} for reads and writes, each request carrying the limits and
     * retry strategies {@link #build} gives its own clients; never closed here.
     */
    static S3Clients onApplicationClient(S3Client client, Duration timeout, int attempts) {
        return new S3Clients(client, client, null, limits(readRetries(attempts), timeout, attempts),
                limits(writeRetries(attempts), timeout, attempts), false);
    }

    private static AwsRequestOverrideConfiguration limits(RetryStrategy retries, Duration timeout, int attempts) {
        return AwsRequestOverrideConfiguration.builder()
                .apiCallAttemptTimeout(timeout)
                .apiCallTimeout(timeout.multipliedBy(attempts).plusSeconds(1))
                .addPlugin(config -> config.overrideConfiguration(config.overrideConfiguration().toBuilder()
                        .retryStrategy(retries).build()))
                .build();
    }

    /** Reads are idempotent: the SDK's standard retries, at most {@code attempts} tries. */
    private static RetryStrategy readRetries(int attempts) {
        return AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(attempts).build();
    }

    /** Writes: retried only after an attempt known not to have been applied. */
    private static RetryStrategy writeRetries(int attempts) {
        return DefaultRetryStrategy.standardStrategyBuilder()
                .maxAttempts(attempts)
                .useClientDefaults(false) // else the client adds back "retry any 5xx and I/O error"
                .retryOnException(S3Clients::notApplied)
                .treatAsThrottling(t -> t instanceof S3Exception e && S3Answers.isThrottling(e))
                .backoffStrategy(BackoffStrategy.exponentialDelay(BASE_DELAY, MAX_BACKOFF))
                .throttlingBackoffStrategy(BackoffStrategy.exponentialDelay(THROTTLED_BASE_DELAY, MAX_BACKOFF))
                .build();
    }

    /** An attempt of a conditional write that certainly changed nothing, so retrying it is safe. */
    private static boolean notApplied(Throwable t) {
        return t instanceof S3Exception e ? S3Answers.refused(e) : S3Answers.neverSent(t);
    }

    private static S3Client client(Consumer<S3ClientBuilder> common, SdkHttpClient http, RetryStrategy retries,
                                   Duration timeout, int attempts) {
        S3ClientBuilder b = S3Client.builder().httpClient(http);
        common.accept(b);
        return b.overrideConfiguration(o -> o
                        .retryStrategy(retries)
                        .apiCallAttemptTimeout(timeout)
                        .apiCallTimeout(timeout.multipliedBy(attempts).plusSeconds(1)))
                .build();
    }

    /**
     * Closes both clients and the HTTP client they share (the SDK leaves a given HTTP client open)
     * if they are ours; the application's client stays open.
     */
    @Override
    public void close() {
        if (!owned) return;
        try {
            reads.close();
            writes.close();
        } finally {
            http.close();
        }
    }
}
