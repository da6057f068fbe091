package dev.latchkey.s3;

import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.s3.S3ConditionalStore.Staleness;
import dev.latchkey.spi.LockUri;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

/**
 * The store an {@code s3://} URI names ({@link S3LockProvider} documents its parameters), on a client
 * of the URI's settings or on the application's own ({@link S3Locks}). A URI that does not describe a
 * usable store is refused with {@link UnsupportedLockUriException} saying what to change; nothing is
 * sent to the store here.
 *
 * <p>It lives apart from {@link S3LockProvider} so that the provider names no SDK type: the command
 * instantiates every provider it ships to learn their schemes, and a run on another backend then
 * loads none of the AWS SDK's classes.
 */
final class S3StoreFactory {
    private static final Set<String> PARAMS = Set.of("region", "endpoint", "pathStyle", "accessKeyId",
            "secretAccessKey", "sessionToken", "timeout", "maxAttempts", "staleness", "probe");
    /** What {@link S3Locks} takes: the rest is the application client's. */
    static final Set<String> APPLICATION_PARAMS = Set.of("timeout", "maxAttempts", "staleness", "probe");
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);

    private S3StoreFactory() {}

    /**
     * @param application the application's client (then {@code uri} names bucket, prefix and
     *                    {@link #APPLICATION_PARAMS} only), or null: a client of the URI's settings
     * @param forManager  whether a manager will run on it: then it probes the store first unless
     *                    {@code probe=false}; a store raced by the TCK or {@code latchkey check} never does
     */
    static S3ConditionalStore storeOn(LockUri uri, S3Client application, boolean forManager) {
        uri.requireOnly(application == null ? PARAMS : APPLICATION_PARAMS);
        if (uri.user().isPresent()) {
            throw new UnsupportedLockUriException("s3:// takes credentials as accessKeyId=…&secretAccessKey=… parameters, not user info: " + uri);
        }
        String bucket = uri.host();
        if (bucket.isEmpty() || uri.port().isPresent()) {
            throw new UnsupportedLockUriException("s3:// needs a bucket name as host (s3://bucket/prefix; the server goes in endpoint=…): " + uri);
        }
        String prefix = uri.pathPrefix();
        Optional<String> endpoint = uri.param("endpoint");
        Duration timeout = uri.durationParam("timeout", DEFAULT_TIMEOUT);
        int attempts = uri.intParam("maxAttempts", 2);
        if (attempts < 1 || attempts > 10) {
            throw new UnsupportedLockUriException("maxAttempts must be 1..10 in " + uri);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new UnsupportedLockUriException("timeout must be positive in " + uri);
        }
        boolean probe = uri.booleanParam("probe", true) && forManager;
        if (application != null) {
            Optional<URI> override = application.serviceClientConfiguration().endpointOverride();
            return new S3ConditionalStore(S3Clients.onApplicationClient(application, timeout, attempts), bucket, prefix,
                    override.map(URI::toString).orElse("AWS S3 in " + application.serviceClientConfiguration().region()),
                    "s3 via the application's S3Client " + uri, staleness(uri, override.isPresent()), probe);
        }
        Staleness staleness = staleness(uri, endpoint.isPresent());
        Region region = region(uri, endpoint.isPresent());
        AwsCredentialsProvider credentials = credentials(uri);
        boolean pathStyle = uri.booleanParam("pathStyle", false);
        URI endpointUri = endpoint.map(e -> endpointUri(e, uri)).orElse(null);
        S3Clients clients;
        try {
            clients = S3Clients.build(b -> {
                b.region(region).credentialsProvider(credentials).forcePathStyle(pathStyle)
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
                        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
                if (endpointUri != null) b.endpointOverride(endpointUri);
            }, timeout, attempts);
        } catch (SdkClientException e) {
            throw new UnsupportedLockUriException("cannot set up an S3 client for " + uri + ": " + e.getMessage(), e);
        }
        return new S3ConditionalStore(clients, bucket, prefix, endpoint.orElse("AWS S3 in " + region.id()),
                uri.toString(), staleness, probe);
    }

    /** {@code staleness=server|observed}; default server for AWS S3 itself, observed for any other endpoint. */
    private static Staleness staleness(LockUri uri, boolean hasEndpoint) {
        Optional<String> given = uri.param("staleness");
        if (given.isEmpty()) return hasEndpoint ? Staleness.OBSERVED : Staleness.SERVER;
        return switch (given.get()) {
            case "server" -> Staleness.SERVER;
            case "observed" -> Staleness.OBSERVED;
            default -> throw new UnsupportedLockUriException("staleness must be server (the store's Date and "
                    + "Last-Modified come from clocks kept in sync) or observed (watch a record unchanged for a TTL): " + uri);
        };
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
