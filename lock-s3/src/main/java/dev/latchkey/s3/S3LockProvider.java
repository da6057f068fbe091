package dev.latchkey.s3;

import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.engine.LeaseEngine;
import dev.latchkey.s3.S3ConditionalStore.Staleness;
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
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

/**
 * {@code s3://bucket[/prefix]?region=…&endpoint=…&pathStyle=true&accessKeyId=…&secretAccessKey=…&staleness=…}:
 * locks as objects {@code <prefix>/<encoded key>.lock}, changed only by conditional writes, run by
 * the shared {@link LeaseEngine}. Safe on any store whose {@code If-None-Match: *} and
 * {@code If-Match} writes are atomic (AWS S3 is; check others with {@code latchkey check}). A lock
 * is identified by bucket, prefix (leading and trailing slashes aside) and key: every other
 * parameter may differ between clients of one lock.
 *
 * <p><b>Staleness</b> ({@link Staleness}): {@code staleness=server} judges a record's age by the
 * server's {@code Date} − {@code Last-Modified}, which is safe only when both come from clocks kept
 * well within TTL/5 of each other; {@code staleness=observed} watches a version unchanged for a TTL
 * on the local monotonic clock and reads no wall clock. The default is {@code server} for AWS S3
 * itself (no {@code endpoint}: its fleet's clocks are tightly synchronised) and {@code observed}
 * for any {@code endpoint} (MinIO or Ceph nodes behind a load balancer may answer {@code Date} and
 * {@code Last-Modified} from different, unsynchronised clocks). Only {@code server} declares
 * {@link Capability#SERVER_SIDE_EXPIRY}.
 *
 * <p>Credentials come from {@code accessKeyId}/{@code secretAccessKey} (+ {@code sessionToken}),
 * else from the SDK's default chain (environment, profile, instance role). The region comes from
 * {@code region}, else the SDK's default chain, else {@code us-east-1} when an {@code endpoint} is
 * given. Each call makes at most {@code maxAttempts} attempts (default 2) of at most
 * {@code timeout} each (default 3 s), and ends within {@code maxAttempts × timeout + 1 s}
 * ({@link S3Clients}), so an unreachable store surfaces in seconds, well inside a lease's margin.
 *
 * <p>An application that has configured its own {@code S3Client} opens a manager on it with {@link S3Locks}.
 */
public final class S3LockProvider implements LockProvider {
    private static final Set<String> PARAMS = Set.of("region", "endpoint", "pathStyle", "accessKeyId",
            "secretAccessKey", "sessionToken", "timeout", "maxAttempts", "staleness");
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);

    @Override
    public Set<String> schemes() {
        return Set.of("s3");
    }

    @Override
    public String description() {
        return "S3 and S3-compatible object stores (conditional writes: If-None-Match / If-Match)";
    }

    /** What {@link S3Locks} takes: the rest is the application client's. */
    static final Set<String> APPLICATION_PARAMS = Set.of("timeout", "maxAttempts", "staleness");

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        return open(openStore(uri), context);
    }

    /** The one way a manager is made, on a URI's store or on one over the application's client ({@link S3Locks}). */
    static LockManager open(S3ConditionalStore store, LockContext context) {
        return new LeaseEngine(store, context, store.staleness() == Staleness.SERVER
                ? EnumSet.of(Capability.SERVER_SIDE_EXPIRY) : EnumSet.noneOf(Capability.class));
    }

    /** The store alone, for the TCK's CAS contract and {@code latchkey check}. */
    public S3ConditionalStore openStore(LockUri uri) {
        return storeOn(uri, null);
    }

    /**
     * @param application the application's client (then {@code uri} names bucket, prefix and
     *                    {@link #APPLICATION_PARAMS} only), or null: a client of the URI's settings
     */
    static S3ConditionalStore storeOn(LockUri uri, S3Client application) {
        uri.requireOnly(application == null ? PARAMS : APPLICATION_PARAMS);
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
        if (timeout.isNegative() || timeout.isZero()) {
            throw new UnsupportedLockUriException("timeout must be positive in " + uri);
        }
        if (application != null) {
            Optional<URI> override = application.serviceClientConfiguration().endpointOverride();
            return new S3ConditionalStore(S3Clients.onApplicationClient(application, timeout, attempts), bucket, prefix,
                    override.map(URI::toString).orElse("AWS S3 in " + application.serviceClientConfiguration().region()),
                    "s3 via the application's S3Client " + uri, staleness(uri, override.isPresent()));
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
                uri.toString(), staleness);
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
