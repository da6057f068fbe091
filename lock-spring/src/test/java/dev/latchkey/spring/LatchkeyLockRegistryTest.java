package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.InvalidLockKeyException;
import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ConcurrentModificationException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * Where a {@link LatchkeyLockRegistry} lock keeps {@link Lock}'s contract and where it differs, on
 * {@code file://}. {@code other} is a second registry on its own manager: another instance.
 */
class LatchkeyLockRegistryTest {
    private static final LeaseOptions OPTIONS = LeaseOptions.ttl(Duration.ofSeconds(3));
    @TempDir
    Path dir;
    private LockManager locks;
    private LockManager otherLocks;
    private LatchkeyLockRegistry registry;
    private LatchkeyLockRegistry other;
    /** A thread of its own for a holder the test thread must not block on. */
    private final ExecutorService threadA = Executors.newSingleThreadExecutor();

    @BeforeEach
    void open() {
        String uri = dir.toUri().toString();
        locks = Latchkey.open(uri);
        otherLocks = Latchkey.open(uri);
        registry = new LatchkeyLockRegistry(locks, OPTIONS);
        other = new LatchkeyLockRegistry(otherLocks, OPTIONS);
    }

    @AfterEach
    void close() {
        threadA.shutdownNow();
        locks.close();
        otherLocks.close();
    }

    @Test
    void oneLockPerKey() {
        assertThat(registry.obtain("k")).isSameAs(registry.obtain("k")).isNotSameAs(registry.obtain("k2"));
    }

    @Test
    void twoRegistriesExcludeEachOther() throws Exception {
        Lock mine = registry.obtain("k");
        mine.lock();
        assertThat(other.obtain("k").tryLock()).isFalse();
        assertThat(other.obtain("k").tryLock(200, TimeUnit.MILLISECONDS)).as("a bounded wait times out").isFalse();
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> {
            Lock theirs = other.obtain("k");
            theirs.lock();
            theirs.unlock();
            return true;
        });
        mine.unlock();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).as("lock() got it once it was free").isTrue();
    }

    @Test
    void reentrantForTheOwningThread() {
        Lock lock = registry.obtain("k");
        lock.lock();
        assertThat(lock.tryLock()).as("a second lock() by the same thread").isTrue();
        String leaseId = locks.inspect("k").map(LockInfo::leaseId).orElseThrow();
        lock.unlock();
        assertThat(locks.inspect("k").map(LockInfo::leaseId)).as("still held after one of two unlocks").contains(leaseId);
        assertThat(other.obtain("k").tryLock()).isFalse();
        lock.unlock();
        assertThat(locks.inspect("k")).as("released after the last unlock").isEmpty();
        assertThat(other.obtain("k").tryLock()).isTrue();
        other.obtain("k").unlock();
    }

    @Test
    void ownedByTheThreadThatLocked() throws Exception {
        Lock lock = registry.obtain("k");
        lock.lock();
        CompletableFuture<Throwable> fromAnotherThread = CompletableFuture.supplyAsync(() -> {
            try {
                lock.unlock();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertThat(fromAnotherThread.get(30, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class);
        CompletableFuture<Boolean> tryFromAnotherThread = CompletableFuture.supplyAsync(lock::tryLock);
        assertThat(tryFromAnotherThread.get(30, TimeUnit.SECONDS)).as("another thread of this process waits too").isFalse();
        assertThat(locks.inspect("k")).isPresent();
        lock.unlock();
    }

    @Test
    void unlockByAThreadThatDoesNotOwnTheLockSaysSo() throws Exception {
        Lock lock = registry.obtain("k");
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageStartingWith("The current thread doesn't own a lock for: k");
        lock.lock();
        Throwable fromAnotherThread = CompletableFuture.supplyAsync(() -> {
            try {
                lock.unlock();
                return null;
            } catch (Throwable t) {
                return t;
            }
        }).get(30, TimeUnit.SECONDS);
        assertThat(fromAnotherThread)
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageStartingWith("The current thread doesn't own a lock for: k");
        lock.unlock();
        assertThatThrownBy(() -> registry.renewLock("never-obtained"))
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageStartingWith("The current thread doesn't own a lock for: never-obtained");
    }

    @Test
    void newConditionIsUnsupported() {
        assertThatThrownBy(() -> registry.obtain("k").newCondition()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void unlockAfterTheLeaseWasBrokenThrowsAndLeavesTheNewHolderAlone() {
        Lock lock = registry.obtain("k");
        lock.lock();
        assertThat(otherLocks.forceRelease("k")).isTrue();
        Lock theirs = other.obtain("k");
        assertThat(theirs.tryLock()).isTrue();

        assertThatThrownBy(lock::unlock)
                .isInstanceOf(ConcurrentModificationException.class)
                .cause().isInstanceOf(LeaseLostException.class)
                .satisfies(e -> assertThat(((LeaseLostException) e).reason()).isNotEqualTo(LeaseLostException.Reason.EXPIRED));
        assertThat(otherLocks.inspect("k").map(LockInfo::owner)).as("the new holder keeps the key").isPresent();
        assertThat(lock.tryLock()).as("unheld here after the failed unlock; the store still refuses it").isFalse();
        theirs.unlock();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void reentryAfterTheLeaseWasLostFailsWhileTheNewHolderHasTheKey() throws Exception {
        DistributedLock lock = registry.obtain("k");
        lock.lock();
        assertThat(otherLocks.forceRelease("k")).isTrue();
        Lease theirs = otherLocks.tryAcquire("k", OPTIONS).orElseThrow();

        assertThat(lock.tryLock()).as("re-entry finds the lease lost and the key taken").isFalse();
        assertThat(lock.tryLock(100, TimeUnit.MILLISECONDS)).as("a bounded re-entry times out").isFalse();
        assertThat(lock.tryLock(Duration.ofMillis(100), Duration.ofSeconds(7))).isFalse();
        assertThat(((LeaseLock) lock).held().isValid()).as("the lease the thread still holds the lock by").isFalse();
        assertThatThrownBy(() -> registry.renewLock("k")).isInstanceOf(LeaseLostException.class);
        assertThat(otherLocks.inspect("k").map(LockInfo::leaseId)).as("the new holder keeps the key").contains(theirs.leaseId());

        // the failed re-entries took no hold: the one unlock for the one lock() reports the loss
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(ConcurrentModificationException.class)
                .cause().isInstanceOf(LeaseLostException.class)
                .satisfies(e -> assertThat(((LeaseLostException) e).reason().ranOutLocally()).isFalse());
        assertThatThrownBy(lock::unlock).as("no hold is left").isInstanceOf(IllegalMonitorStateException.class);
        assertThat(otherLocks.inspect("k").map(LockInfo::leaseId)).contains(theirs.leaseId());
        theirs.release();
    }

    @Test
    void reentrantLockAfterTheLeaseWasLostWaitsForTheKeyAndTheLastUnlockStillReportsTheLoss() throws Exception {
        Lock lock = registry.obtain("k");
        onA(() -> {
            lock.lock();
            return null;
        });
        assertThat(otherLocks.forceRelease("k")).isTrue();
        Lease theirs = otherLocks.tryAcquire("k", OPTIONS).orElseThrow();

        Future<?> reentry = threadA.submit(() -> {
            lock.lock();
            return null;
        });
        assertThat(reentry).as("lock() cannot return while another holder has the key").isNotDone();
        theirs.release();
        reentry.get(30, TimeUnit.SECONDS);
        String fresh = locks.inspect("k").map(LockInfo::leaseId).orElse(null);
        assertThat(fresh).as("the re-entry took a fresh lease").isNotNull().isNotEqualTo(theirs.leaseId());

        assertThat(thrownOnA(lock::unlock)).as("an inner unlock").isNull();
        assertThat(locks.inspect("k").map(LockInfo::leaseId)).as("still held for the outer hold").contains(fresh);
        assertThat(thrownOnA(lock::unlock))
                .as("the outer hold spanned the loss")
                .isInstanceOf(ConcurrentModificationException.class)
                .cause().isInstanceOf(LeaseLostException.class);
        assertThat(locks.inspect("k")).as("the fresh lease was released all the same").isEmpty();
    }

    @Test
    void lockWithTtlChoosesTheLeaseTtl() throws Exception {
        DistributedLock lock = registry.obtain("k");
        assertThat(lock.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(7))).isTrue();
        assertThat(((LeaseLock) lock).held().ttl()).isEqualTo(Duration.ofSeconds(7));
        lock.unlock();
    }

    @Test
    void renewLockByTheOwnerOnly() throws Exception {
        Lock lock = registry.obtain("k");
        lock.lock();
        registry.renewLock("k");
        registry.renewLock("k", Duration.ofSeconds(9)); // another TTL: Lease.renew(Duration)
        assertThat(locks.inspect("k")).get().extracting(info -> info.expiresAt())
                .as("the store's expiry, 9 s ahead rather than the lease's first 3 s").matches(at -> at.isAfter(Instant.now().plusSeconds(5)));
        CompletableFuture<Throwable> fromAnotherThread = CompletableFuture.supplyAsync(() -> {
            try {
                registry.renewLock("k");
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        assertThat(fromAnotherThread.get(30, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class);
        lock.unlock();
        assertThatThrownBy(() -> registry.renewLock("k")).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> registry.renewLock("never-obtained")).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void expireForgetsUnheldLocksOnly() {
        Lock held = registry.obtain("held");
        Lock unheld = registry.obtain("unheld");
        held.lock();
        registry.expireUnusedOlderThan(-1);
        assertThat(registry.obtain("held")).isSameAs(held);
        assertThat(registry.obtain("unheld")).isNotSameAs(unheld);
        held.unlock();
    }

    @Test
    void keysAreCheckedBeforeAnyIo() {
        assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registry.obtain("")).isInstanceOf(InvalidLockKeyException.class);
    }

    @Test
    void lockInterruptiblyAnswersAnInterrupt() throws Exception {
        Lock mine = registry.obtain("k");
        mine.lock();
        CompletableFuture<Throwable> waiter = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                other.obtain("k").lockInterruptibly();
                waiter.complete(null);
            } catch (Throwable e) {
                waiter.complete(e);
            }
        });
        t.start();
        Await.until("the waiter is waiting", () -> t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.WAITING);
        t.interrupt();
        assertThat(waiter.get(30, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(other.obtain("k").tryLock()).isFalse();
        mine.unlock();
    }

    @Test
    void lockIsNotInterruptibleButKeepsTheInterrupt() throws Exception {
        Lock mine = registry.obtain("k");
        mine.lock();
        CompletableFuture<Boolean> interruptedAfterLock = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            Lock theirs = other.obtain("k");
            theirs.lock();
            interruptedAfterLock.complete(Thread.interrupted()); // cleared: file:// cannot release on an interrupted thread
            theirs.unlock();
        });
        t.start();
        Await.until("the waiter is waiting", () -> t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.WAITING);
        t.interrupt();
        Await.until("the interrupt was taken in", () -> !t.isInterrupted() || interruptedAfterLock.isDone());
        assertThat(interruptedAfterLock).isNotDone();
        mine.unlock();
        assertThat(interruptedAfterLock.get(30, TimeUnit.SECONDS)).as("lock() returned with the interrupt restored").isTrue();
    }

    private <T> T onA(Callable<T> call) throws Exception {
        try {
            return threadA.submit(call).get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /** What {@code action} threw on thread A, or null. */
    private Throwable thrownOnA(Runnable action) throws Exception {
        return onA(() -> {
            try {
                action.run();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
    }
}
