package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.spi.LockUri;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** What is particular to {@code azblob://}: URI rules, lease-duration rules, break semantics. */
class AzureBackendTest {
    private final String tag = "t" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void badUrisAreRefusedNamingThePartWithoutTheSecret() {
        String creds = "account=acct&accountKey=hush-hush";
        assertThatThrownBy(() -> Latchkey.open("azblob:///locks?" + creds))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("container")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hush-hush"));
        assertThatThrownBy(() -> Latchkey.open("azblob://c/locks?mode=optimistic&" + creds))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("mode")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hush-hush"));
        assertThatThrownBy(() -> Latchkey.open("azure://c/locks?sas=sv%3Dx&" + creds))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("not both")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hush-hush"));
        assertThatThrownBy(() -> Latchkey.open("azblob://c/locks?ttl=5s&" + creds))
                .isInstanceOf(UnsupportedLockUriException.class).hasMessageContaining("ttl");
    }

    @Test
    void descriptionMasksTheKeyInBothModes() {
        String key = LockUri.parse(Azurite.uri()).param("accountKey").orElseThrow();
        for (String mode : new String[] {"lease", "etag"}) {
            try (LockManager m = Latchkey.open(Azurite.uri(mode))) {
                assertThat(m.description()).contains("mode=" + mode).doesNotContain(key);
            }
        }
    }

    @Test
    void leaseModeRefusesTtlsAzureCannotServeBeforeAnyIo() {
        try (LockManager m = Latchkey.open(Azurite.uri("lease"))) {
            for (Duration ttl : new Duration[] {Duration.ofSeconds(14), Duration.ofSeconds(61), Duration.ofMillis(15_500)}) {
                assertThatThrownBy(() -> m.tryAcquire(tag, LeaseOptions.ttl(ttl)))
                        .as("ttl %s", ttl).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("15s to 60s").hasMessageContaining("mode=etag");
            }
            assertThat(m.inspect(tag)).as("nothing was written").isEmpty();
        }
    }

    @Test
    void brokenLeaseCannotBeRenewedAndTheBreakerSeesAFreeKey() {
        try (LockManager a = Latchkey.open(Azurite.uri("lease")); LockManager b = Latchkey.open(Azurite.uri("lease"))) {
            Lease held = a.tryAcquire(tag, LeaseOptions.ttl(Duration.ofSeconds(30)).withoutHeartbeat()).orElseThrow();
            assertThat(b.inspect(tag)).hasValueSatisfying(i -> {
                assertThat(i.leaseId()).isEqualTo(held.leaseId());
                assertThat(i.fencingToken()).isEqualTo(held.fencingToken());
            });
            assertThat(b.forceRelease(tag)).isTrue();
            assertThat(b.inspect(tag)).isEmpty();
            assertThat(b.forceRelease(tag)).as("a second break finds nothing to break").isFalse();
            assertThatThrownBy(held::renew).isInstanceOf(LeaseLostException.class).hasMessageContaining("force-released");
            Lease next = b.tryAcquire(tag, LeaseOptions.ttl(Duration.ofSeconds(30))).orElseThrow();
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            next.release();
        }
    }
}
