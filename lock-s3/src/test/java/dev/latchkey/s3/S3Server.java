package dev.latchkey.s3;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.net.URI;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The S3 server the tests share: {@code LATCHKEY_TEST_S3_URI}; else, where a Docker engine answers,
 * MinIO as a container (conditional {@code PutObject} with {@code If-None-Match}/{@code If-Match});
 * else S3Proxy over Azurite from {@code scripts/s3.sh} (our CI). In lock-s3's second test run, Ceph
 * RGW instead ({@link #uri}). Every route gives a URI of the form the script prints.
 */
final class S3Server {
    private static final String IMAGE = System.getProperty("latchkey.test.s3.image",
            "minio/minio:RELEASE.2025-09-07T16-13-09Z");
    private static final String BUCKET = "latchkey";
    // test-only credentials, as scripts/s3.sh uses
    private static final String ACCESS = "latchkey-test";
    private static final String SECRET = "latchkey-test-secret";

    private S3Server() {}

    /**
     * The server under test: {@code -Dlatchkey.test.s3.server=ceph-rgw} (lock-s3's second test run)
     * makes it Ceph RGW ({@code LATCHKEY_TEST_RGW_URI}, else {@code scripts/ceph-rgw.sh}).
     */
    static String uri() {
        if (onRgw()) return ExternalServer.uri("LATCHKEY_TEST_RGW_URI", "ceph-rgw");
        return ExternalServer.uri("LATCHKEY_TEST_S3_URI", "s3", S3Server::startMinio);
    }

    /** Whether this run is the one against Ceph RGW. */
    static boolean onRgw() {
        return "ceph-rgw".equals(System.getProperty("latchkey.test.s3.server"));
    }

    /** A fresh store client (own HTTP client), as a separate process would have. */
    static S3ConditionalStore newStore(String uri) {
        return new S3LockProvider().openStore(LockUri.parse(uri));
    }

    /** A plain SDK client on the server of {@code uri} (path style), to look behind the backend's back. */
    static S3Client rawClient(String uri) {
        LockUri parsed = LockUri.parse(uri);
        return S3Client.builder().httpClientBuilder(UrlConnectionHttpClient.builder())
                .region(Region.US_EAST_1).forcePathStyle(true)
                .endpointOverride(URI.create(parsed.param("endpoint").orElseThrow()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        parsed.param("accessKeyId").orElseThrow(), parsed.param("secretAccessKey").orElseThrow())))
                .build();
    }

    /** MinIO in a container (stopped by Testcontainers at JVM exit), with the bucket created. */
    private static String startMinio() {
        GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withLabel(ExternalServer.CONTAINER_LABEL, "true")
                .withExposedPorts(9000)
                .withEnv("MINIO_ROOT_USER", ACCESS)
                .withEnv("MINIO_ROOT_PASSWORD", SECRET)
                .withCommand("server", "/data")
                .waitingFor(Wait.forHttp("/minio/health/ready").forPort(9000).forStatusCode(200));
        c.start();
        String uri = "s3://" + BUCKET + "/locks?endpoint=http://" + c.getHost() + ":" + c.getMappedPort(9000)
                + "&region=us-east-1&pathStyle=true&accessKeyId=" + ACCESS + "&secretAccessKey=" + SECRET;
        try (S3Client raw = rawClient(uri)) {
            raw.createBucket(b -> b.bucket(BUCKET));
        }
        return uri;
    }
}
