package dev.latchkey.azure;

import com.azure.core.http.HttpClient;
import com.azure.core.util.HttpClientOptions;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobContainerClientBuilder;
import com.azure.storage.common.StorageSharedKeyCredential;
import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import dev.latchkey.tck.ServerClock;
import java.time.Duration;
import dev.latchkey.spi.LockUri;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The lock contract in {@code mode=etag} against Azurite, through the application's-client route:
 * the managers of this JVM open on one shared {@link BlobContainerClient} built as an application
 * would, with the SDK's default retry policy ({@link AzureLocks}); the other mode and the other
 * processes open the same container and prefix by URI, so both routes must exclude each other. (The
 * URI route's contract is {@link AzureLeaseTckTest} and {@link AzureEtagStoreContractTest}.)
 *
 * <p>The tests run concurrently: each has its own keys and managers, and most of their time is waiting
 * (TTLs, the store's pace).
 */
@Execution(ExecutionMode.CONCURRENT)
class AzureEtagTckTest extends LockManagerContract {
    private static BlobContainerClient container;

    @BeforeAll
    static void buildClient() {
        container = client(Azurite.uri());
    }

    /** A container client for the lock URI {@code lockUri}, built as an application would. */
    private static BlobContainerClient client(String lockUri) {
        LockUri uri = LockUri.parse(lockUri);
        // Azurite (Node) closes a keep-alive connection after 5 s idle; a request sent on it just then is
        // reset, and the SDK's default retry waits 4 s before its next try: longer than this class's
        // heartbeats allow. Closing idle connections first, at 3 s, keeps that race out of the tests.
        return new BlobContainerClientBuilder()
                .httpClient(HttpClient.createDefault(new HttpClientOptions().setConnectionIdleTimeout(Duration.ofSeconds(3))))
                .endpoint(uri.param("endpoint").orElseThrow())
                .credential(new StorageSharedKeyCredential(uri.param("account").orElseThrow(), uri.param("accountKey").orElseThrow()))
                .containerName(uri.host())
                .buildClient();
    }

    @Override
    protected LockManager newManager(LockContext context) {
        return open(container, Azurite.uri(), context);
    }

    private static LockManager open(BlobContainerClient client, String uri, LockContext context) {
        String prefix = LockUri.parse(uri).path().replaceFirst("^/", "");
        return AzureLocks.open(client, AzureLocks.options().prefix(prefix).mode(AzureLocks.Mode.ETAG), context);
    }

    /**
     * An Azurite of its own under libfaketime, for the kit's server-clock tests only (the rest use the
     * shared one); its managers open on one client of their own, built as {@link #container} is.
     */
    @Override
    protected ServerClock serverClock() {
        return AzuriteClock.get().clock((uri, context) -> open(ClockClient.CLIENT, uri, context));
    }

    /** The clock server's client, built on first use. */
    private static final class ClockClient {
        static final BlobContainerClient CLIENT = client(AzuriteClock.get().uri());
    }

    /** Date and Last-Modified have one-second resolution, and ages are lowered by a second. */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    @Override
    protected String uriForOtherProcesses() {
        return Azurite.uri("etag");
    }

    /** The other mode on the same container and prefix: it must refuse, naming the mismatch. */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        return List.of(new OtherConfiguration() {
            @Override public String name() { return "mode=lease"; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(Azurite.uri("lease"), context); }
        });
    }
}
