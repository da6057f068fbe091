package dev.latchkey.s3;

import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.engine.LeaseEngine;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

/**
 * {@code s3://bucket[/prefix]?region=…&endpoint=…&pathStyle=true&accessKeyId=…&secretAccessKey=…}:
 * locks as objects {@code <prefix>/<encoded key>.lock}, changed only by conditional writes, run by
 * the shared {@link LeaseEngine}. Safe on any store whose {@code If-None-Match: *} and
 * {@code If-Match} writes are atomic (AWS S3 is; check others with {@code latchkey check}).
 *
 * <p>Credentials come from {@code accessKeyId}/{@code secretAccessKey} (+ {@code sessionToken}),
 * else from the SDK's default chain (environment, profile, instance role). The region comes from
 * {@code region}, else the SDK's default chain, else {@code us-east-1} when an {@code endpoint} is
 * given. The client retries once ({@code maxAttempts}, default 2) with a short per-attempt
 * {@code timeout} (default 5 s), so an unreachable store surfaces in seconds, not minutes.
 */
public final class S3LockProvider implements LockProvider {
    private static final Set<String> PARAMS = Set.of("region", "endpoint", "pathStyle", "accessKeyId",
            "secretAccessKey", "sessionToken", "timeout", "maxAttempts");
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    @Override
    public Set<String> schemes() {
        return Set.of("s3");
    }

    @Override
    public String description() {
        return "S3 and S3-compatible object stores (conditional writes: If-None-Match / If-Match)";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        return new LeaseEngine(openStore(uri), context, EnumSet.of(Capability.SERVER_SIDE_EXPIRY));
    }

    /** The store alone, for the TCK's CAS contract and {@code latchkey check}. */
    public S3ConditionalStore openStore(LockUri uri) {
        uri.requireOnly(PARAMS);
        if (uri.user().isPresent()) {
            throw new UnsupportedLockUriException("s3:// takes credentials as accessKeyId=…&secretAccessKey=… parameters, not user info: " + uri);
        }
        String bucket = uri.host();
        if (bucket.isEmpty() || uri.port().isPresent()) {
            throw new UnsupportedLockUriException("s3:// needs a bucket name as host (s3://bucket/prefix; the server goes in endpoint=…): " + uri);
        }
        String prefix = trimSlashes(uri.path());
        Optional<String> endpoint = uri.param("endpoint");
        Duration timeout = uri.durationParam("timeout", DEFAULT_TIMEOUT);
        int attempts = uri.intParam("maxAttempts", 2);
        if (attempts < 1 || attempts > 10) {
            throw new UnsupportedLockUriException("maxAttempts must be 1..10 in " + uri);
        }
        var builder = S3Client.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder()
                        .connectionTimeout(CONNECT_TIMEOUT.compareTo(timeout) < 0 ? CONNECT_TIMEOUT : timeout)
                        .socketTimeout(timeout))
                .region(region(uri, endpoint.isPresent()))
                .credentialsProvider(credentials(uri))
                .forcePathStyle(uri.booleanParam("pathStyle", false))
                // no "Expect: 100-continue": a conditional PUT that fails is answered (412) before
                // the body is read, and HttpURLConnection then reports a failed write instead of
                // the 412 — which the SDK would retry, turning a clean answer into an ambiguous one
                // and a plain signed body instead of aws-chunked streaming signatures (used over
                // http endpoints), which some compatible stores mishandle; records are tiny
                .serviceConfiguration(S3Configuration.builder().expectContinueEnabled(false)
                        .chunkedEncodingEnabled(false).build())
                // checksums only where S3 requires them: compatible stores often reject the
                // aws-chunked trailers the SDK would otherwise send on every PutObject
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .overrideConfiguration(o -> o
                        .retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(attempts).build())
                        .apiCallAttemptTimeout(timeout)
                        .apiCallTimeout(timeout.multipliedBy(attempts).plusSeconds(1)));
        endpoint.ifPresent(e -> builder.endpointOverride(endpointUri(e, uri)));
        S3Client client;
        try {
            client = builder.build();
        } catch (SdkClientException e) {
            throw new UnsupportedLockUriException("cannot set up an S3 client for " + uri + ": " + e.getMessage(), e);
        }
        Region region = client.serviceClientConfiguration().region();
        return new S3ConditionalStore(client, bucket, prefix,
                endpoint.orElse("AWS S3 in " + region.id()), uri.toString());
    }

    private static String trimSlashes(String path) {
        int from = 0;
        int to = path.length();
        while (from < to && path.charAt(from) == '/') from++;
        while (to > from && path.charAt(to - 1) == '/') to--;
        return path.substring(from, to);
    }

    private static Region region(LockUri uri, boolean hasEndpoint) {
        Optional<String> region = uri.param("region");
        if (region.isPresent()) return Region.of(region.get());
        try {
            return new DefaultAwsRegionProviderChain().getRegion();
        } catch (SdkClientException e) {
            if (hasEndpoint) return Region.US_EAST_1; // S3-compatible stores mostly ignore it
            throw new UnsupportedLockUriException("no AWS region for " + uri
                    + ": add region=… to the URI or set AWS_REGION", e);
        }
    }

    private static AwsCredentialsProvider credentials(LockUri uri) {
        Optional<String> id = uri.param("accessKeyId");
        Optional<String> secret = uri.param("secretAccessKey");
        if (id.isPresent() != secret.isPresent()) {
            throw new UnsupportedLockUriException("give both accessKeyId and secretAccessKey, or neither (then the SDK's default chain is used): " + uri);
        }
        if (id.isEmpty()) {
            if (uri.param("sessionToken").isPresent()) {
                throw new UnsupportedLockUriException("sessionToken needs accessKeyId and secretAccessKey: " + uri);
            }
            return DefaultCredentialsProvider.builder().build();
        }
        Optional<String> token = uri.param("sessionToken");
        return StaticCredentialsProvider.create(token.isPresent()
                ? AwsSessionCredentials.create(id.get(), secret.get(), token.get())
                : AwsBasicCredentials.create(id.get(), secret.get()));
    }

    private static URI endpointUri(String endpoint, LockUri uri) {
        try {
            URI e = new URI(endpoint);
            if (e.getScheme() == null || e.getHost() == null) throw new URISyntaxException(endpoint, "needs http(s)://host");
            return e;
        } catch (URISyntaxException e) {
            throw new UnsupportedLockUriException("endpoint must be like https://host[:port]: " + uri, e);
        }
    }
}
