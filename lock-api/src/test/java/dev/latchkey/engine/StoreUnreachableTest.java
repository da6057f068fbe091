package dev.latchkey.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockListener;
import dev.latchkey.LockManager;
import dev.latchkey.mem.MemConditionalStore;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.StoredRecord;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Which deadline loss is which: STORE_UNREACHABLE when renewals failed or hung, EXPIRED when none was tried. */
class StoreUnreachableTest {

    /**
     * A {@link MemConditionalStore} whose calls fail while {@code down} is set, as an unreachable store's do,
     * and hang while {@code hanging} is set, until {@code answer} is counted down.
     */
    private static final class Outage implements ConditionalStore {
        final ConditionalStore inner = MemConditionalStore.named("outage-" + System.nanoTime());
        final AtomicBoolean down = new AtomicBoolean();
        final AtomicBoolean hanging = new AtomicBoolean();
        final CountDownLatch answer = new CountDownLatch(1);

        private void check() {
            if (down.get()) throw new LockBackendException("store unreachable (test outage)", true);
            if (hanging.get()) {
                try {
                    answer.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new LockBackendException("no answer (test outage)", true);
            }
        }

        @Override public Optional<StoredRecord> read(String name) { check(); return inner.read(name); }
        @Override public Optional<String> create(String name, byte[] data) { check(); return inner.create(name, data); }
        @Override public Optional<String> replace(String name, String v, byte[] data) { check(); return inner.replace(name, v, data); }
        @Override public boolean delete(String name, String v) { check(); return inner.delete(name, v); }
        @Override public List<String> list(String prefix) { check(); return inner.list(prefix); }
        @Override public String describe() { return "mem://outage"; }
        @Override public void close() {}
    }

    @Test
    void renewalsFailingUntilTheDeadlineEndTheLeaseAsStoreUnreachable() throws Exception {
        Outage store = new Outage();
        AtomicInteger failuresHeard = new AtomicInteger();
        CompletableFuture<LeaseLostException> lostHeard = new CompletableFuture<>();
        LockListener listener = new LockListener() {
            @Override public void renewalFailed(String scheme, String key, Duration validLeft, RuntimeException error) {
                failuresHeard.incrementAndGet();
            }

            @Override public void lost(String scheme, String key, Duration held, LeaseLostException cause) {
                lostHeard.complete(cause);
            }
        };
        try (LockManager locks = new ConditionalStoreLockManager(store, LockContext.defaults().withListener(listener), Set.of())) {
            Lease lease = locks.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(1))).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            store.down.set(true);

            LeaseLostException cause = lost.get(30, TimeUnit.SECONDS);
            assertThat(cause.reason()).as("reason (%s)", cause.getMessage()).isEqualTo(LeaseLostException.Reason.STORE_UNREACHABLE);
            assertThat(cause.reason().ranOutLocally()).isTrue();
            assertThat(lostHeard.get(30, TimeUnit.SECONDS)).as("the listener's loss").isSameAs(cause);
            assertThat(failuresHeard).as("failed renewals the listener heard of before the loss").hasPositiveValue();
        }
    }

    @Test
    void aRenewalStillWaitingForTheStoreAtTheDeadlineEndsTheLeaseAsStoreUnreachable() throws Exception {
        Outage store = new Outage();
        try (LockManager locks = new ConditionalStoreLockManager(store, LockContext.defaults(), Set.of())) {
            Lease lease = locks.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(1))).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            store.hanging.set(true);

            LeaseLostException cause = lost.get(30, TimeUnit.SECONDS);
            assertThat(cause.reason()).as("reason (%s)", cause.getMessage()).isEqualTo(LeaseLostException.Reason.STORE_UNREACHABLE);
        } finally {
            store.answer.countDown();
        }
    }

    @Test
    void aLeaseNobodyRenewedEndsAsExpired() throws Exception {
        Outage store = new Outage();
        try (LockManager locks = new ConditionalStoreLockManager(store, LockContext.defaults(), Set.of())) {
            Lease lease = locks.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(1)).withoutHeartbeat()).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);
            store.down.set(true); // no renewal is tried, so the outage is not why the lease ran out

            assertThat(lost.get(30, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostException.Reason.EXPIRED);
        }
    }
}
