package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import dev.latchkey.spi.LockContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link LockManager#callLocked}, {@link LockManager#asLock} and {@link LockManager#acquireAsync} on mem:// and file://. */
class ConveniencesTest {
    private static final Duration SOON = Duration.ofSeconds(30);
    @TempDir Path dir;
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    private String uri(String scheme) {
        return scheme.equals("mem") ? "mem://conveniences-" + System.nanoTime() : "file://" + dir;
    }

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    void callLockedInterruptsTheWorkWhenTheLeaseIsBroken(String scheme) throws Exception {
        String u = uri(scheme);
        try (LockManager a = Latchkey.open(u); LockManager b = Latchkey.open(u)) {
            CountDownLatch working = new CountDownLatch(1);
            AtomicReference<Throwable> workSaw = new AtomicReference<>();
            AtomicBoolean interruptLeft = new AtomicBoolean(true);
            // a heartbeat of 100 ms finds the break long before the 60 s lease could run out
            LeaseOptions options = LeaseOptions.ttl(Duration.ofSeconds(60)).withHeartbeat(Duration.ofMillis(100));
            CompletableFuture<Object> call = CompletableFuture.supplyAsync(() -> {
                try {
                    return a.callLocked("job", SOON, options, () -> {
                        working.countDown();
                        try {
                            TimeUnit.MINUTES.sleep(10);
                        } catch (InterruptedException e) {
                            workSaw.set(e);
                            throw e;
                        }
                        return "finished";
                    });
                } catch (Exception e) {
                    return e;
                } finally {
                    interruptLeft.set(Thread.interrupted());
                }
            }, pool);
            assertThat(working.await(SOON.toSeconds(), TimeUnit.SECONDS)).as("work started").isTrue();
            assertThat(b.forceRelease("job")).isTrue();

            Object outcome = call.get(SOON.toSeconds(), TimeUnit.SECONDS);
            assertThat(outcome).as("what callLocked gave its caller").isInstanceOf(LeaseLostException.class);
            LeaseLostException lost = (LeaseLostException) outcome;
            assertThat(lost.reason()).isEqualTo(LeaseLostException.Reason.BROKEN);
            assertThat(workSaw.get()).as("what the work saw").isInstanceOf(InterruptedException.class);
            assertThat(lost.getSuppressed()).as("the work's own exception, attached").containsExactly(workSaw.get());
            assertThat(interruptLeft).as("the interrupt callLocked made, left set for its caller").isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    void callLockedReturnsTheResultAndReleases(String scheme) throws Exception {
        String u = uri(scheme);
        try (LockManager a = Latchkey.open(u); LockManager b = Latchkey.open(u)) {
            String result = a.callLocked("job", SOON, () -> {
                assertThat(b.tryAcquire("job")).as("the key while the work runs").isEmpty();
                return "done";
            });
            assertThat(result).isEqualTo("done");
            assertThat(b.inspect("job")).as("the key after the call").isEmpty();
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    void lockViewExcludesOthersIsNotReentrantAndIsOwnedByItsThread(String scheme) throws Exception {
        String u = uri(scheme);
        try (LockManager a = Latchkey.open(u); LockManager b = Latchkey.open(u)) {
            LeaseLock lock = a.asLock("job", LeaseOptions.defaults());
            LeaseLock other = b.asLock("job", LeaseOptions.defaults());
            lock.lock();
            assertThat(lock.lease()).get().extracting(Lease::isValid).isEqualTo(true);
            assertThat(other.tryLock()).as("another view while held").isFalse();
            assertThat(other.tryLock(100, TimeUnit.MILLISECONDS)).as("another view, waiting").isFalse();
            assertThatThrownBy(lock::lock).as("locking again on the holding thread").isInstanceOf(IllegalStateException.class);
            assertThat(CompletableFuture.supplyAsync(() -> {
                try {
                    lock.unlock();
                    return null;
                } catch (RuntimeException e) {
                    return e;
                }
            }, pool).get(SOON.toSeconds(), TimeUnit.SECONDS)).as("unlock from another thread")
                    .isInstanceOf(IllegalMonitorStateException.class);
            assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
            lock.unlock();
            assertThat(other.tryLock(SOON.toMillis(), TimeUnit.MILLISECONDS)).as("another view after unlock").isTrue();
            other.unlock();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    void lockViewUnlockReportsALossWithItsReason(String scheme) throws Exception {
        String u = uri(scheme);
        try (LockManager a = Latchkey.open(u); LockManager b = Latchkey.open(u)) {
            LeaseLock lock = a.asLock("job", LeaseOptions.defaults());
            lock.lock();
            assertThat(b.forceRelease("job")).isTrue();
            assertThatThrownBy(lock::unlock).isInstanceOf(LeaseLostException.class)
                    .extracting(e -> ((LeaseLostException) e).reason()).isEqualTo(LeaseLostException.Reason.BROKEN);
            assertThat(lock.lease()).as("held after the failed unlock").isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    void acquireAsyncCompletesOnTheExecutorAndGivesBackALateLease(String scheme) throws Exception {
        String u = uri(scheme);
        CountDownLatch granted = new CountDownLatch(1);
        CountDownLatch givenBack = new CountDownLatch(1);
        LockListener waiterEvents = new LockListener() {
            @Override public void acquired(String s, String key, Duration latency) {
                granted.countDown();
            }

            @Override public void released(String s, String key, Duration held, boolean confirmed) {
                givenBack.countDown();
            }
        };
        try (LockManager a = Latchkey.open(u); LockManager b = Latchkey.open(u, LockContext.defaults().withListener(waiterEvents))) {
            Lease held = a.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> timesOut = b.acquireAsync("job", Duration.ofMillis(100), LeaseOptions.defaults(), pool);
            assertThatThrownBy(() -> timesOut.get(SOON.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(LockTimeoutException.class);

            CompletableFuture<Lease> cancelled = b.acquireAsync("job", SOON, LeaseOptions.defaults(), pool);
            cancelled.cancel(false);
            held.release();
            assertThat(granted.await(SOON.toSeconds(), TimeUnit.SECONDS)).as("the cancelled wait got the key").isTrue();
            assertThat(givenBack.await(SOON.toSeconds(), TimeUnit.SECONDS)).as("the cancelled wait gave the key back").isTrue();
            Lease next = a.acquireAsync("job", SOON, LeaseOptions.defaults(), pool).get(SOON.toSeconds(), TimeUnit.SECONDS);
            assertThat(next.isValid()).isTrue();
            next.release();
        }
    }
}
