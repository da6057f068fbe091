package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpMethod;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelinePosition;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.models.ListBlobsOptions;
import dev.latchkey.Lease;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockUri;
import dev.latchkey.spi.StoreProbe;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The {@code mode=etag} probe on open ({@link AzureStoreProbe}), against Azurite: a store that drops
 * the conditions — here Azurite behind a pipeline policy that strips {@code If-None-Match} and
 * {@code If-Match} from uploads, as a careless proxy or emulator would — is refused before any lock
 * request, with a non-retriable error naming what it ignored; {@code probe=false} opens it anyway
 * (the user's call); an honest store passes and keeps no probe blob.
 */
class AzureStoreProbeTest {
    private final String prefix = "probe-" + UUID.randomUUID();

    /** Azurite's URI in etag mode under a prefix of this test's own. */
    private String uri() {
        String base = Azurite.uri("etag");
        int query = base.indexOf('?');
        return base.substring(0, query).replaceAll("/+$", "") + "/" + prefix + base.substring(query);
    }

    @Test
    void aStoreThatIgnoresTheConditionsIsRefusedAtOpen() {
        ConditionStripper stripper = new ConditionStripper();
        LockBackendException refused = catchThrowableOfType(() -> Azurite.open(uri(), stripper).close(), LockBackendException.class);
        assertThat(refused).as("opening a manager on a store that drops the conditions").isNotNull();
        assertThat(refused.isRetriable()).isFalse();
        assertThat(refused).hasCauseInstanceOf(StoreProbe.Untrusted.class)
                .hasMessageContaining("ignores If-None-Match: *")
                .hasMessageContaining("and If-Match")
                .hasMessageContaining("probe=false");
        assertThat(stripper.stripped.get()).as("conditions the policy stripped").isPositive();
        assertThat(probeBlobs()).as("probe blobs left behind").isZero();
    }

    @Test
    void probeFalseOpensSuchAStoreAnyway() {
        ConditionStripper stripper = new ConditionStripper();
        try (LockManager m = Azurite.open(uri() + "&probe=false", stripper)) {
            assertThat(stripper.stripped.get()).as("no probe ran").isZero();
            m.tryAcquire("k").ifPresent(Lease::release);
        }
    }

    @Test
    void anHonestStorePassesAndKeepsNoProbeBlob() {
        try (LockManager m = Azurite.open(uri())) {
            Lease lease = m.tryAcquire("k").orElseThrow();
            lease.release();
        }
        assertThat(probeBlobs()).isZero();
    }

    private long probeBlobs() {
        BlobContainerClient container = AzureStoreFactory.container(LockUri.parse(uri()), Duration.ofSeconds(30), 2);
        return container.listBlobs(new ListBlobsOptions().setPrefix(LockUri.parse(uri()).pathPrefix() + "/.latchkey-probe/"), Duration.ofSeconds(30)).stream().count();
    }

    /**
     * Removes the conditions from every upload (PUT) before it is signed and sent (a per-call policy
     * runs before the credential's); counts what it removed.
     */
    private static final class ConditionStripper implements HttpPipelinePolicy {
        final AtomicInteger stripped = new AtomicInteger();

        @Override
        public HttpPipelinePosition getPipelinePosition() {
            return HttpPipelinePosition.PER_CALL;
        }

        @Override
        public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
            var request = context.getHttpRequest();
            if (request.getHttpMethod() == HttpMethod.PUT) {
                for (HttpHeaderName h : new HttpHeaderName[] {HttpHeaderName.IF_NONE_MATCH, HttpHeaderName.IF_MATCH}) {
                    if (request.getHeaders().get(h) != null) {
                        request.getHeaders().remove(h);
                        stripped.incrementAndGet();
                    }
                }
            }
            return next.process();
        }
    }
}
