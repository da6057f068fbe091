package dev.latchkey.s3;

import static dev.latchkey.tck.ExternalServer.withParam;

import dev.latchkey.Latchkey;
import dev.latchkey.spi.LockUri;
import java.net.URI;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The lock contract against the real S3 server through the application's-client route: the
 * managers of this JVM open on one shared {@link S3Client} built as an application following
 * {@link S3Locks}' advice for a compatible store would ({@link S3Locks}), with the default staleness
 * of a custom endpoint ({@code observed}); {@code staleness=server}, another spelling of the prefix
 * and other client settings, all by URI, must exclude it on the same keys, as must the other
 * processes, which open the URI. (The URI route's contracts: {@link S3ConditionalStoreContractTest},
 * {@link S3BackendTest} and the fault tests.)
 *
 * <p>The tests run concurrently: each has its own keys and managers, and most of their time is waiting
 * (TTLs, the store's pace).
 */
@Execution(ExecutionMode.CONCURRENT)
class S3TckTest extends LockManagerContract {
    private static S3Client client;

    @BeforeAll
    static void buildClient() {
        LockUri uri = LockUri.parse(S3Server.uri());
        client = S3Client.builder().httpClientBuilder(UrlConnectionHttpClient.builder())
                .region(Region.US_EAST_1).forcePathStyle(true)
                .endpointOverride(URI.create(uri.param("endpoint").orElseThrow()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        uri.param("accessKeyId").orElseThrow(), uri.param("secretAccessKey").orElseThrow())))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .serviceConfiguration(S3Configuration.builder().expectContinueEnabled(false).chunkedEncodingEnabled(false).build())
                .build();
    }

    /** The application closes its client; the managers never did. */
    @AfterAll
    static void closeClient() {
        client.close();
    }

    @Override
    protected LockManager newManager(LockContext context) {
        LockUri uri = LockUri.parse(S3Server.uri());
        return S3Locks.open(client, uri.host(), S3Locks.options().prefix(uri.path().replaceFirst("^/", "")), context);
    }

    /** Date and Last-Modified have one-second resolution, and the store lowers ages by a second. */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    @Override
    protected String uriForOtherProcesses() {
        return S3Server.uri();
    }

    /** A lock is bucket + prefix + key: nothing else in the URI may let two clients of one key both hold it. */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        String uri = S3Server.uri();
        int query = uri.indexOf('?');
        return List.of(
                other("staleness=server", withParam(uri, "staleness", "server")),
                other("the prefix with a trailing slash", uri.substring(0, query) + "/" + uri.substring(query)),
                other("timeout=10s&maxAttempts=1", withParam(withParam(uri, "timeout", "10s"), "maxAttempts", "1")));
    }

    private static OtherConfiguration other(String name, String uri) {
        return new OtherConfiguration() {
            @Override public String name() { return name; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(uri, context); }
        };
    }
}
