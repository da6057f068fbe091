package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * Spring Integration's own lock-registry tests, ported to {@link LatchkeyLockRegistry}: those of
 * {@code JdbcLockRegistryTests}, {@code JdbcLockRegistryDifferentClientTests} and core's
 * {@code DefaultLockRegistryTests} (Spring Integration 7.1) that test the {@code LockRegistry}
 * contract rather than JDBC's table or its lock cache. Test names and assertions are theirs; the code
 * is ours, on one store per subclass; {@link SpringIntegrationDifferentClientTests} holds the
 * second class. Their "another process" (a second {@code DefaultLockRepository}) is a second
 * {@link LockManager} on the same URI.
 *
 * <p>Differences, each marked where it occurs: Latchkey leases heartbeat, so the tests that let a
 * lock's TTL run out turn the heartbeat off ({@link #NO_HEARTBEAT}) and wait for the other client to
 * get the key instead of sleeping past the TTL; the loops of 100 rounds run {@link #ROUNDS}; and
 * {@code renewLock(key, ttl)} with another TTL is unsupported until lock-api renews with a new TTL.
 * Not ported, as they test what this registry does not have: the JDBC lock cache's capacity
 * ({@code setCacheCapacity}: {@code concurrentObtain*}, {@code setCapacityTest},
 * {@code notUsedLockIsEvictedOnCacheLimit}, {@code cannotAcquireLockExceptionOnCacheLimit},
 * {@code unusedLockIsStale}, {@code shrinkingCacheCapacityEvictsUnusedEntries},
 * {@code obtainDoesNotEvictCurrentlyHeldLockOfRequestedKey}), JDBC's table and key hashing
 * ({@code noTableThrowsExceptionOnStart}, {@code testPathForCanBeOverridden}), and
 * {@code DefaultLockRegistry}'s stripe mask ({@code testBadMask*}, {@code testSame},
 * {@code testDifferent}, {@code testAllDifferentAndSame}: which keys share a stripe).
 */
abstract class SpringIntegrationRegistryTests {
    /** Their 100 rounds of two-client races, fewer: each round here is real store I/O on a shared 2-core machine. */
    static final int ROUNDS = 10;
    static final LeaseOptions OPTIONS = LeaseOptions.ttl(Duration.ofSeconds(10));
    /**
     * A lease nothing renews, so that its TTL runs out as a JDBC lock's does when its holder stops. Their
     * TTLs are 1 to 500 ms; ours are at least 1 s throughout: a lease must arrive within TTL·4/5, which a
     * 100 ms TTL missed on the loaded 2-core machine.
     */
    static final LeaseOptions NO_HEARTBEAT = LeaseOptions.ttl(Duration.ofSeconds(1)).withHeartbeat(Duration.ZERO);
    /** Their 100 ms registry TTL and 200 ms custom one, scaled as {@link #NO_HEARTBEAT} says. */
    static final Duration SHORT = Duration.ofSeconds(1);
    static final Duration LONGER = Duration.ofSeconds(2);

    private final List<LockManager> managers = new ArrayList<>();
    final ExecutorService taskExecutor = Executors.newCachedThreadPool();
    LockManager client;
    LatchkeyLockRegistry registry;

    /** The store's URI; the same for every manager of one test. */
    abstract String uri();

    @BeforeEach
    void open() {
        client = newClient();
        registry = new LatchkeyLockRegistry(client, OPTIONS);
    }

    @AfterEach
    void close() {
        taskExecutor.shutdownNow();
        managers.forEach(LockManager::close);
    }

    /** Another process's client: a manager of its own on the same store. */
    LockManager newClient() {
        LockManager locks = Latchkey.open(uri());
        managers.add(locks);
        return locks;
    }

    // ---- JdbcLockRegistryTests ----

    /** Theirs asserts the registry's private map has one entry; ours, that one key is one lock, until expired. */
    @Test
    void testLock() {
        Lock first = registry.obtain("foo");
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain("foo");
            lock.lock();
            try {
                assertThat(lock).isSameAs(first);
            } finally {
                lock.unlock();
            }
        }
        registry.expireUnusedOlderThan(-10000);
        assertThat(registry.obtain("foo")).isNotSameAs(first);
    }

    @Test
    void testLockInterruptibly() throws Exception {
        Lock first = registry.obtain("foo");
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain("foo");
            lock.lockInterruptibly();
            try {
                assertThat(lock).isSameAs(first);
            } finally {
                lock.unlock();
            }
        }
    }

    /** Theirs sleeps past the registry's TTL under the longer one; ours asserts the lease has the longer TTL. */
    @Test
    void testLockWithCustomTtl() {
        LatchkeyLockRegistry lockRegistry = new LatchkeyLockRegistry(client, LeaseOptions.ttl(SHORT));
        for (int i = 0; i < 10; i++) {
            DistributedLock lock = lockRegistry.obtain("foo");
            lock.lock(LONGER);
            try {
                assertThat(((LeaseLock) lock).held().ttl()).isEqualTo(LONGER);
            } finally {
                lock.unlock();
            }
        }
    }

    @Test
    void testTryLockWithCustomTtl() throws Exception {
        LatchkeyLockRegistry lockRegistry = new LatchkeyLockRegistry(client, LeaseOptions.ttl(SHORT));
        for (int i = 0; i < 10; i++) {
            DistributedLock lock = lockRegistry.obtain("foo");
            assertThat(lock.tryLock(Duration.ofSeconds(10), LONGER)).isTrue();
            try {
                assertThat(((LeaseLock) lock).held().ttl()).isEqualTo(LONGER);
            } finally {
                lock.unlock();
            }
        }
    }

    @Test
    void testReentrantLock() {
        for (int i = 0; i < 10; i++) {
            Lock lock1 = registry.obtain("foo");
            lock1.lock();
            try {
                Lock lock2 = registry.obtain("foo");
                assertThat(lock2).isSameAs(lock1);
                lock2.lock();
                lock2.unlock();
            } finally {
                lock1.unlock();
            }
        }
    }

    @Test
    void testReentrantLockInterruptibly() throws Exception {
        for (int i = 0; i < 10; i++) {
            Lock lock1 = registry.obtain("foo");
            lock1.lockInterruptibly();
            try {
                Lock lock2 = registry.obtain("foo");
                assertThat(lock2).isSameAs(lock1);
                lock2.lockInterruptibly();
                lock2.unlock();
            } finally {
                lock1.unlock();
            }
        }
    }

    /**
     * Their assertions (the re-entry after the TTL ran out succeeds; theirs sleeps 100 TTLs first, ours
     * retries until the store has freed the key, which it does a safety margin after the TTL), and one
     * of ours where theirs differs on purpose: the last unlock reports that the outer hold outlived its
     * lease ({@code ConcurrentModificationException}); theirs returns quietly.
     */
    @Test
    void testReentrantLockAfterExpiration() throws Exception {
        LatchkeyLockRegistry registry = new LatchkeyLockRegistry(client, NO_HEARTBEAT);
        Lock lock1 = registry.obtain("foo");
        assertThat(lock1.tryLock()).isTrue();
        Await.until("the lease ran out", () -> !((LeaseLock) lock1).held().isValid());
        try {
            Lock lock2 = registry.obtain("foo");
            assertThat(lock2).isSameAs(lock1);
            Await.until("the re-entry gets a fresh lease", lock2::tryLock);
            lock2.unlock();
        } finally {
            assertThatThrownBy(lock1::unlock).isInstanceOf(ConcurrentModificationException.class);
        }
    }

    @Test
    void testTwoLocks() throws Exception {
        for (int i = 0; i < 10; i++) {
            Lock lock1 = registry.obtain("foo");
            lock1.lockInterruptibly();
            try {
                Lock lock2 = registry.obtain("bar");
                assertThat(lock2).isNotSameAs(lock1);
                lock2.lockInterruptibly();
                lock2.unlock();
            } finally {
                lock1.unlock();
            }
        }
    }

    @Test
    void testTwoThreadsSecondFailsToGetLock() throws Exception {
        Lock lock1 = registry.obtain("foo");
        lock1.lockInterruptibly();
        AtomicBoolean locked = new AtomicBoolean();
        CountDownLatch latch = new CountDownLatch(1);
        Future<Object> result = taskExecutor.submit(() -> {
            Lock lock2 = registry.obtain("foo");
            locked.set(lock2.tryLock(200, TimeUnit.MILLISECONDS));
            latch.countDown();
            try {
                lock2.unlock();
            } catch (Exception e) {
                return e;
            }
            return null;
        });
        assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(locked.get()).isFalse();
        lock1.unlock();
        Object ise = result.get(10, TimeUnit.SECONDS);
        assertThat(ise).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(((Exception) ise).getMessage()).contains("own");
    }

    @Test
    void testTwoThreads() throws Exception {
        twoThreads(registry, registry);
    }

    @Test
    void testTwoThreadsDifferentRegistries() throws Exception {
        for (int i = 0; i < ROUNDS; i++) {
            twoThreads(new LatchkeyLockRegistry(client, OPTIONS), new LatchkeyLockRegistry(newClient(), OPTIONS));
        }
    }

    /** testTwoThreads' body, which testTwoThreadsDifferentRegistries and testSecondThreadLoses repeat. */
    void twoThreads(LatchkeyLockRegistry registry1, LatchkeyLockRegistry registry2) throws Exception {
        Lock lock1 = registry1.obtain("foo");
        AtomicBoolean locked = new AtomicBoolean();
        CountDownLatch latch1 = new CountDownLatch(1);
        CountDownLatch latch2 = new CountDownLatch(1);
        CountDownLatch latch3 = new CountDownLatch(1);
        lock1.lockInterruptibly();
        taskExecutor.execute(() -> {
            Lock lock2 = registry2.obtain("foo");
            try {
                latch1.countDown();
                lock2.lockInterruptibly();
                latch2.await(10, TimeUnit.SECONDS);
                locked.set(true);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock2.unlock();
                latch3.countDown();
            }
        });
        assertThat(latch1.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(locked.get()).isFalse();
        lock1.unlock();
        latch2.countDown();
        assertThat(latch3.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(locked.get()).isTrue();
    }

    @Test
    void testTwoThreadsWrongOneUnlocks() throws Exception {
        Lock lock = registry.obtain("foo");
        lock.lockInterruptibly();
        CountDownLatch latch = new CountDownLatch(1);
        Future<Object> result = taskExecutor.submit(() -> {
            try {
                lock.unlock();
            } catch (Exception e) {
                latch.countDown();
                return e;
            }
            return null;
        });
        assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
        Object imse = result.get(10, TimeUnit.SECONDS);
        assertThat(imse).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(((Exception) imse).getMessage()).contains("own");
    }

    @Test
    void testLockRenew() {
        Lock lock = registry.obtain("foo");
        assertThat(lock.tryLock()).isTrue();
        try {
            registry.renewLock("foo");
        } finally {
            lock.unlock();
        }
    }

    @Test
    void testLockRenewLockNotOwned() {
        registry.obtain("foo");
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(() -> registry.renewLock("foo"));
    }

    /**
     * KNOWN OMISSION: theirs renews with a longer TTL and asserts another process cannot take the key
     * after the first TTL. A Latchkey lease renews only by the TTL it was taken with until lock-api
     * grows a renewal with a new TTL, so this asserts today's answer; replace it by theirs then.
     */
    @Test
    void testLockRenewWithCustomTtl() throws Exception {
        DistributedLock lock = registry.obtain("foo");
        assertThat(lock.tryLock(Duration.ofSeconds(10), SHORT)).isTrue();
        try {
            registry.renewLock("foo", LONGER); // the kit checks what a renewal with a new TTL does on every backend
            assertThat(newClient().tryAcquire("foo")).as("another client, after the renewal").isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /** Theirs sleeps for the TTL; ours waits until the other process gets the key. */
    @Test
    void testUnlockAfterLockStatusHasBeenExpiredAndLockHasBeenAcquiredByAnotherProcess() {
        LatchkeyLockRegistry process1Registry = new LatchkeyLockRegistry(client, NO_HEARTBEAT);
        LatchkeyLockRegistry process2Registry = new LatchkeyLockRegistry(newClient(), NO_HEARTBEAT);
        Lock lock1 = process1Registry.obtain("foo");
        Lock lock2 = process2Registry.obtain("foo");
        lock1.lock();
        Await.until("the other process gets the expired lock", lock2::tryLock);
        assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock1::unlock);
        lock2.unlock();
    }

    /**
     * Theirs deletes the expired row ({@code deleteExpired}); ours removes the expired lease with
     * another client's {@code forceRelease}, Latchkey's way to delete a lock record. (Without it, on
     * {@code file://} and {@code mem://} the expired record stays until a contender takes the key, and
     * an unlock before that returns quietly: no one else can have held the key in between.)
     */
    @Test
    void testUnlockAfterLockStatusHasBeenExpiredAndDeleted() {
        LatchkeyLockRegistry registry = new LatchkeyLockRegistry(client, NO_HEARTBEAT);
        Lock lock = registry.obtain("foo");
        lock.lock();
        Await.until("the lease ran out", () -> !((LeaseLock) lock).held().isValid());
        newClient().forceRelease("foo");
        assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock);
    }

    // ---- DefaultLockRegistryTests ----

    @Test
    void testSingleLockCreation() {
        Lock a = registry.obtain("foo");
        Lock b = registry.obtain("foo");
        Lock c = registry.obtain("foo");
        assertThat(b).isSameAs(a);
        assertThat(c).isSameAs(a);
        assertThat(c).isSameAs(b);
    }

    @Test
    void cyclicBarrierIsBrokenWhenExecutedConcurrentlyInLock() throws Exception {
        CyclicBarrier cyclicBarrier = new CyclicBarrier(2);
        CountDownLatch brokenBarrierLatch = new CountDownLatch(2);
        Runnable runnableLocked = () -> {
            try {
                registry.executeLocked("lockKey", () -> {
                    try {
                        cyclicBarrier.await(1, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.BrokenBarrierException | TimeoutException e) {
                        brokenBarrierLatch.countDown();
                    }
                });
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
        taskExecutor.execute(runnableLocked);
        taskExecutor.execute(runnableLocked);
        assertThat(brokenBarrierLatch.await(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Theirs sleeps 200 ms under the lock so that the other call times out; ours holds it until that call has. */
    @Test
    void executeLockedIsTimedOutInOtherThread() throws Exception {
        String lockKey = "lockKey";
        Duration waitLockDuration = Duration.ofMillis(100);
        CountDownLatch timeoutExceptionLatch = new CountDownLatch(1);
        CountDownLatch holding = new CountDownLatch(1);
        AtomicReference<TimeoutException> exceptionAtomicReference = new AtomicReference<>();
        Future<?> holder = taskExecutor.submit(() -> {
            registry.executeLocked(lockKey, waitLockDuration, () -> {
                holding.countDown();
                timeoutExceptionLatch.await(10, TimeUnit.SECONDS);
            });
            return null;
        });
        assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            registry.executeLocked(lockKey, waitLockDuration, () -> { });
        } catch (TimeoutException e) {
            exceptionAtomicReference.set(e);
            timeoutExceptionLatch.countDown();
        }
        assertThat(timeoutExceptionLatch.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(exceptionAtomicReference.get())
                .hasMessage("The lock [%s] was not acquired in time: %s".formatted(lockKey, waitLockDuration));
        holder.get(10, TimeUnit.SECONDS);
    }
}
