package dev.latchkey.gcs;

import com.google.cloud.NoCredentials;
import com.google.cloud.storage.BucketInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import dev.latchkey.gcs.testserver.Adversity;
import dev.latchkey.gcs.testserver.GcsTestServer;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The GCS the tests use: {@code $LATCHKEY_TEST_GCS_URI} if set (a real bucket, or an emulator);
 * else, on the {@code containers} route, {@code fsouza/fake-gcs-server} as a container; else one
 * {@link GcsTestServer} started in this JVM on a free port, with GCS's one write per second to an
 * object and {@linkplain Adversity#seeded seeded adversity} (our CI): random generations, a
 * {@code Date} and an {@code updated} from two drifting clocks, bursts sometimes admitted; the seed
 * is printed, and {@code -Dlatchkey.test.gcs.seed=N} repeats it. Bucket {@code latchkey}, prefix {@code locks}, for the whole run; tests keep apart
 * by key (the TCK tags every key).
 *
 * <p>fake-gcs-server's preconditions are incomplete in released images (see the module's README
 * fragment): where the container route is taken, the delete and CAS-contract tests may fail there
 * for the emulator's sake, not the backend's.
 */
final class GcsFixture {
    static final String ENV = "LATCHKEY_TEST_GCS_URI";
    private static final String IMAGE = System.getProperty("latchkey.test.gcs.image", "fsouza/fake-gcs-server:1.52.2");
    private static final String BUCKET = "latchkey";
    private static String uri;

    private GcsFixture() {}

    /** The {@code gs://} URI of the shared test bucket and prefix. */
    static synchronized String uri() {
        if (uri == null) {
            String fromEnv = System.getenv(ENV);
            boolean external = (fromEnv != null && !fromEnv.isBlank()) || ExternalServer.containers();
            uri = external ? ExternalServer.uri(ENV, "gcs", GcsFixture::startFakeGcsServer)
                    : GcsTestServer.start(0, GcsTestServer.DEFAULT_OBJECT_WRITE_INTERVAL,
                            Adversity.seededFrom("latchkey.test.gcs.seed")).uri(BUCKET, "locks");
        }
        return uri;
    }

    /** A fresh, independent store client on {@link #uri()}. */
    static GcsConditionalStore newStore() {
        return GcsStoreFactory.store(LockUri.parse(uri()));
    }

    /**
     * A plain client, to look behind the backend's back: of the server at {@code endpoint} (no
     * credentials), or of Google's service with Application Default Credentials if null.
     */
    static Storage rawClient(String endpoint) {
        if (endpoint == null) return StorageOptions.http().build().getService();
        return StorageOptions.http().setHost(endpoint).setProjectId("test").setCredentials(NoCredentials.getInstance())
                .build().getService();
    }

    /** fake-gcs-server in a container (stopped by Testcontainers at JVM exit), with the bucket created. */
    private static String startFakeGcsServer() {
        GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withLabel(ExternalServer.CONTAINER_LABEL, "true")
                .withExposedPorts(4443)
                .withCommand("-scheme", "http", "-port", "4443", "-backend", "memory")
                .waitingFor(Wait.forHttp("/storage/v1/b").forPort(4443).forStatusCode(200));
        c.start();
        String endpoint = "http://" + c.getHost() + ":" + c.getMappedPort(4443);
        try (Storage raw = rawClient(endpoint)) {
            raw.create(BucketInfo.of(BUCKET));
        } catch (Exception e) {
            throw new IllegalStateException("cannot create bucket " + BUCKET + " on fake-gcs-server at " + endpoint, e);
        }
        // the form scripts/gcs.sh prints
        return "gs://" + BUCKET + "/locks?endpoint=" + endpoint + "&project=test";
    }
}
