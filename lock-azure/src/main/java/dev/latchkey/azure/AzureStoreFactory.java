package dev.latchkey.azure;

import com.azure.core.http.HttpClient;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.core.util.Context;
import com.azure.core.util.HttpClientOptions;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobContainerClientBuilder;
import com.azure.storage.common.StorageSharedKeyCredential;
import com.azure.storage.common.policy.RequestRetryOptions;
import com.azure.storage.common.policy.RetryPolicyType;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The container client of an {@code azblob://container/prefix?…} URI: one HTTP client per manager,
 * at most {@code maxAttempts} tries of at most {@code timeout} each, 200 ms apart, so an unreachable
 * account surfaces in seconds. Callers pass {@code timeout} to every SDK call as well, which ends
 * the call then, whatever its tries are doing: {@code timeout} bounds a whole call, and a second try
 * only follows a failure that came fast (a reset connection, a 503).
 */
final class AzureStoreFactory {
    private static final System.Logger LOG = System.getLogger(AzureStoreFactory.class.getName());
    /** The bound of the warm-up call ({@link #warmUp}); its tries keep the client's own bounds. */
    static final Duration WARM_UP = Duration.ofSeconds(30);
    static final String CONNECTION_STRING_ENV = "AZURE_STORAGE_CONNECTION_STRING";
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration RETRY_DELAY = Duration.ofMillis(200);

    private AzureStoreFactory() {}

    /** The container named by the URI's host; the URI's path (trimmed of slashes) is the blob prefix. */
    static BlobContainerClient container(LockUri uri, Duration timeout, int maxAttempts) {
        return container(uri, timeout, maxAttempts, List.of());
    }

    /**
     * As {@link #container(LockUri, Duration, int)}, with {@code policies} in the HTTP pipeline after
     * the retry policy, so they see every try (tests watch and disturb requests with them).
     */
    static BlobContainerClient container(LockUri uri, Duration timeout, int maxAttempts, List<HttpPipelinePolicy> policies) {
        String container = uri.host();
        if (container.isEmpty() || uri.port().isPresent() || uri.user().isPresent()) {
            throw new UnsupportedLockUriException(uri.scheme() + ":// needs a container name as host ("
                    + uri.scheme() + "://container/prefix?account=…; the server goes in endpoint=…): " + uri);
        }
        Optional<String> account = uri.param("account");
        Optional<String> key = uri.param("accountKey");
        Optional<String> sas = uri.param("sas");
        if (key.isPresent() && sas.isPresent()) {
            throw new UnsupportedLockUriException("give accountKey or sas, not both: " + uri);
        }
        HttpClient http = HttpClient.createDefault(new HttpClientOptions().setConnectTimeout(CONNECT_TIMEOUT)
                .setResponseTimeout(timeout).setReadTimeout(timeout).setWriteTimeout(timeout));
        BlobContainerClientBuilder b = new BlobContainerClientBuilder()
                .httpClient(http)
                .retryOptions(new RequestRetryOptions(RetryPolicyType.FIXED, maxAttempts, timeout,
                        RETRY_DELAY, RETRY_DELAY, null))
                .containerName(container);
        policies.forEach(b::addPolicy);
        String connectionString = System.getenv(CONNECTION_STRING_ENV);
        if (key.isEmpty() && sas.isEmpty() && connectionString != null && !connectionString.isBlank()) {
            b.connectionString(connectionString); // sets endpoint and credential
            uri.param("endpoint").ifPresent(b::endpoint);
            return build(b, uri);
        }
        String endpoint = uri.param("endpoint").orElseGet(() -> account
                .map(a -> "https://" + a + ".blob.core.windows.net")
                .orElseThrow(() -> new UnsupportedLockUriException("say which storage account: account=… or endpoint=… (or set "
                        + CONNECTION_STRING_ENV + "): " + uri)));
        checkEndpoint(endpoint, uri);
        b.endpoint(endpoint);
        if (key.isPresent()) {
            String name = account.orElseThrow(() -> new UnsupportedLockUriException("accountKey needs account=…: " + uri));
            b.credential(new StorageSharedKeyCredential(name, key.get()));
        } else if (sas.isPresent()) {
            b.sasToken(sas.get());
        } else {
            throw new UnsupportedLockUriException("no credentials for " + uri + ": give accountKey=… or sas=…, or set "
                    + CONNECTION_STRING_ENV + " (Azure AD sign-in is not bundled, to keep azure-identity off the class path)");
        }
        return build(b, uri);
    }

    private static BlobContainerClient build(BlobContainerClientBuilder b, LockUri uri) {
        try {
            return b.buildClient();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new UnsupportedLockUriException("cannot set up an Azure Blob client for " + uri + ": " + e.getMessage(), e);
        }
    }

    private static void checkEndpoint(String endpoint, LockUri uri) {
        try {
            URI e = URI.create(endpoint);
            if (e.getScheme() == null || e.getHost() == null) throw new IllegalArgumentException();
        } catch (IllegalArgumentException e) {
            throw new UnsupportedLockUriException("endpoint must be like https://account.blob.core.windows.net: " + uri, e);
        }
    }

    /**
     * Starts {@code container}'s client before a manager's first call: one read of the container's
     * properties, which may take up to {@link #WARM_UP}. The first SDK call of a fresh JVM also starts
     * the SDK (its classes, its HTTP client's event loops, its XML mapper): with six {@code latchkey run}s
     * started at once on a loaded 2-core machine, that took more than the 5 s call timeout, and every
     * first acquisition timed out while the server answered in milliseconds. Spent on a read, that
     * time lands where an unknown outcome costs nothing; the lock calls keep their own bound, so no
     * acquisition stays unanswered longer than {@code timeout}. Each try is still cut by the
     * client's own bounds (connect 2 s, response {@code timeout}), so an account that does not answer
     * costs an open at most the tries of one call. Any answer warms the client, a refusal too (a SAS
     * that may not read the container): failures are ignored here, the lock calls report their own.
     */
    static void warmUp(BlobContainerClient container) {
        try {
            container.getPropertiesWithResponse(null, WARM_UP, Context.NONE);
        } catch (RuntimeException e) {
            LOG.log(Level.DEBUG, "warm-up read of container " + container.getBlobContainerName() + " at "
                    + endpointOf(container) + " failed (the lock calls report their own failures): " + e);
        }
    }

    /** The account endpoint of a container client, for messages (no query string: no SAS). */
    static String endpointOf(BlobContainerClient container) {
        String url = container.getBlobContainerUrl();
        int q = url.indexOf('?');
        return q >= 0 ? url.substring(0, q) : url;
    }
}
