package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockListener;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A process at its thread limit ({@code OutOfMemoryError: unable to create native thread}, as the
 * JDK throws it) while a manager holds leases: a heartbeat without a renewer thread is a failed
 * renewal (the {@code renewalFailed} event carries why), the loss it costs says so
 * ({@code NO_RENEWER_THREAD}), and an event that finds no thread to deliver it fails nothing.
 * (The kit's {@code ThreadLimitChecks} check the timing on every backend.)
 */
class ThreadLimitTest {

    /** Daemon threads, or the JDK's error at a thread limit while {@link #refusing}. */
    private static final class Limit implements ThreadFactory {
        volatile boolean refusing;
        final AtomicInteger made = new AtomicInteger();

        @Override
        public Thread newThread(Runnable r) {
            if (refusing) throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource limits reached");
            Thread t = new Thread(r, "limited-" + made.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
    }

    @Test
    void aHeartbeatWithNoRenewerThreadIsAFailedRenewalAndTheLossSaysWhy() throws Exception {
        Limit limit = new Limit();
        BlockingQueue<RuntimeException> renewalFailures = new LinkedBlockingQueue<>();
        CompletableFuture<LeaseLostException> lostEvent = new CompletableFuture<>();
        LockListener listener = new LockListener() {
            @Override public void renewalFailed(String scheme, String key, Duration validLeft, RuntimeException error) {
                renewalFailures.add(error);
            }
            @Override public void lost(String scheme, String key, Duration held, LeaseLostException cause) {
                lostEvent.complete(cause);
            }
        };
        String uri = "mem://thread-limit-" + System.nanoTime();
        try (LockManager other = Latchkey.open(uri); LockManager locks = Latchkey.open(uri, LockContext.defaults()
                .withThreadFactory(limit).withListener(listener))) {
            // the event thread starts (on a busy event) before the limit is reached; no renewer has started yet
            try (Lease busy = other.tryAcquire("busy").orElseThrow()) {
                assertThat(locks.tryAcquire("busy")).isEmpty();
            }
            assertThat(limit.made.get()).as("threads started before the limit: the event thread").isEqualTo(1);
            limit.refusing = true;

            Lease lease = locks.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(1))).orElseThrow();
            CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
            lease.onLost(lost::complete);

            RuntimeException failure = renewalFailures.poll(30, TimeUnit.SECONDS);
            assertThat(failure).as("renewalFailed event of a heartbeat with no renewer thread").isNotNull();
            assertThat(failure).isExactlyInstanceOf(LockBackendException.class)
                    .hasMessageContaining("could not start a renewer thread")
                    .hasCauseExactlyInstanceOf(OutOfMemoryError.class);
            assertThat(((LockBackendException) failure).isRetriable()).isTrue();

            LeaseLostException cause = lost.get(30, TimeUnit.SECONDS);
            assertThat(cause).isExactlyInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("could not start a renewer thread")
                    .hasCauseExactlyInstanceOf(OutOfMemoryError.class);
            assertThat(cause.reason()).isEqualTo(LeaseLostException.Reason.NO_RENEWER_THREAD);
            assertThat(cause.reason().ranOutLocally()).isTrue();
            assertThat(lostEvent.get(30, TimeUnit.SECONDS)).as("the lost event").isSameAs(cause);
            assertThat(lease.isValid()).isFalse();
        } finally {
            limit.refusing = false;
        }
    }

    @Test
    void anEventWithNoThreadToDeliverItIsDroppedAndTheLeaseCarriesOn() throws Exception {
        Limit limit = new Limit();
        limit.refusing = true;
        LockListener listener = new LockListener() {};
        try (LockManager locks = Latchkey.open("mem://thread-limit-events-" + System.nanoTime(), LockContext.defaults()
                .withThreadFactory(limit).withListener(listener))) {
            // its 'acquired' event finds no event thread and none can start
            AtomicReference<Lease> held = new AtomicReference<>();
            assertThatCode(() -> held.set(locks.tryAcquire("job", LeaseOptions.ttl(Duration.ofSeconds(30))).orElseThrow()))
                    .as("tryAcquire while no event thread can start").doesNotThrowAnyException();
            Lease lease = held.get();
            assertThat(lease.isValid()).isTrue();
            limit.refusing = false;
            lease.release();
            assertThat(lease.isValid()).isFalse();
        } finally {
            limit.refusing = false;
        }
    }
}
