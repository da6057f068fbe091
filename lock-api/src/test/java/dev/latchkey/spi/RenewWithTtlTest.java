package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What {@link ManagedLease#renew(Duration)} does to the lease's own schedule, beyond what the kit
 * checks in the store: the heartbeat renews by the new TTL, an explicit heartbeat interval too long
 * for it becomes a third of it, and a TTL the backend refuses changes nothing.
 */
class RenewWithTtlTest {
    private static LockManager mem() {
        return Latchkey.open("mem://renew-ttl-" + UUID.randomUUID());
    }

    @Test
    void theHeartbeatRenewsByTheNewTtl() throws Exception {
        try (LockManager locks = mem()) {
            Lease lease = locks.tryAcquire("k", LeaseOptions.ttl(Duration.ofMillis(600))).orElseThrow();
            lease.renew(Duration.ofSeconds(3));
            Instant byTheRenewal = lease.expiresAt();
            // a heartbeat by the old 600 ms could not move expiresAt past what the 3 s renewal gave
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!lease.expiresAt().isAfter(byTheRenewal) && System.nanoTime() - deadline < 0) {
                TimeUnit.MILLISECONDS.sleep(20);
            }
            assertThat(lease.expiresAt()).as("expiresAt after a heartbeat").isAfter(byTheRenewal);
            assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(3));
            assertThat(lease.isValid()).isTrue();
            lease.release();
        }
    }

    @Test
    void aHeartbeatTooLongForTheNewTtlBecomesAThirdOfIt() {
        try (LockManager locks = mem()) {
            ManagedLease lease = (ManagedLease) locks.tryAcquire("k",
                    LeaseOptions.ttl(Duration.ofSeconds(30)).withHeartbeat(Duration.ofSeconds(5))).orElseThrow();
            lease.renew(Duration.ofSeconds(60));
            assertThat(lease.heartbeat()).as("an interval that still fits").isEqualTo(Duration.ofSeconds(5));
            lease.renew(Duration.ofSeconds(3));
            assertThat(lease.heartbeat()).isEqualTo(Duration.ofSeconds(1));
            lease.release();
        }
    }

    @Test
    void aRefusedTtlChangesNothing() {
        try (LockManager locks = mem()) {
            Lease lease = locks.tryAcquire("k", LeaseOptions.ttl(Duration.ofSeconds(30))).orElseThrow();
            Instant expires = lease.expiresAt();
            assertThatThrownBy(() -> lease.renew(Duration.ofMillis(99))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> lease.release(Duration.ofMillis(99))).isInstanceOf(IllegalArgumentException.class);
            assertThat(lease.ttl()).isEqualTo(Duration.ofSeconds(30));
            assertThat(lease.expiresAt()).isEqualTo(expires);
            assertThat(lease.isValid()).isTrue();
            lease.release();
        }
    }
}
