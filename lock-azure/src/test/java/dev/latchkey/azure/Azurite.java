package dev.latchkey.azure;

import com.azure.core.http.policy.HttpPipelinePolicy;
import dev.latchkey.LockManager;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The Azure server the tests share: {@code LATCHKEY_TEST_AZURE_URI}; else, on the {@code containers}
 * route ({@link ExternalServer#containers()}), Azurite in a container of the locally built image;
 * else Azurite from {@code scripts/azurite.sh}. Every route gives a URI of the form the script prints.
 */
final class Azurite {
    private static final String ACCOUNT = "devstoreaccount1";
    // Azurite's well-known development key (public, documented by Microsoft; not a secret)
    private static final String KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    private static final String CONTAINER = "latchkey";

    private Azurite() {}

    static String uri() {
        return ExternalServer.uri("LATCHKEY_TEST_AZURE_URI", "azurite", Azurite::startContainer);
    }

    /** The shared server's URI with {@code mode=…} set. */
    static String uri(String mode) {
        return withMode(uri(), mode);
    }

    static String withMode(String uri, String mode) {
        return ExternalServer.withParam(uri, "mode", mode);
    }

    /** A manager for {@code uri} whose client has {@code policies} in its HTTP pipeline. */
    static LockManager open(String uri, HttpPipelinePolicy... policies) {
        return AzureLockProvider.open(LockUri.parse(uri), LockContext.defaults(), List.of(policies));
    }

    static ConditionalStore newStore() {
        return new AzureLockProvider().openStore(LockUri.parse(uri()));
    }

    /**
     * Azurite's blob service in a container (stopped by Testcontainers at JVM exit) with the flags
     * of {@code scripts/azurite.sh} that matter: on-disk storage, {@code --skipApiVersionCheck} (the
     * SDK asks for a newer service version) and {@code --disableTelemetry}; container created. The
     * image is {@code -Dlatchkey.test.azure.image} (Microsoft's
     * {@code mcr.microsoft.com/azure-storage/azurite:3.35.0} serves too), else the one
     * {@code scripts/images/build.sh azurite} builds: Debian's {@code nodejs} and the npm package of
     * {@code scripts/install-azurite.sh}.
     */
    @SuppressWarnings("resource") // stopped at JVM exit
    private static String startContainer() {
        String image = ExternalServer.image("latchkey.test.azure.image", "azurite");
        GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(image))
                .withLabel(ExternalServer.CONTAINER_LABEL, "true")
                .withExposedPorts(10000)
                .withCommand("azurite-blob", "--blobHost", "0.0.0.0", "--blobPort", "10000", "--location", "/data",
                        "--skipApiVersionCheck", "--disableTelemetry")
                // a real request, as the script checks: any HTTP answer (unsigned, so 403) means it serves
                .waitingFor(Wait.forHttp("/" + ACCOUNT + "?comp=list").forPort(10000).forStatusCodeMatching(code -> code > 0));
        c.start();
        String uri = "azblob://" + CONTAINER + "/locks?endpoint=http://" + c.getHost() + ":" + c.getMappedPort(10000)
                + "/" + ACCOUNT + "&account=" + ACCOUNT + "&accountKey=" + URLEncoder.encode(KEY, StandardCharsets.UTF_8);
        AzureStoreFactory.container(LockUri.parse(uri), Duration.ofSeconds(30), 3).createIfNotExists();
        return uri;
    }
}
