package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.LockManager;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;

/**
 * Spring Integration's {@code JdbcLockRegistryDifferentClientTests} (7.1), ported as
 * {@link SpringIntegrationRegistryTests} says, with its differences: two clients are two
 * {@link LockManager}s on one store; 100 rounds are {@link #ROUNDS}; the TTL-runs-out tests turn
 * the heartbeat off and await instead of sleeping. Every store's class extends this one, so it runs
 * both ported classes.
 */
abstract class SpringIntegrationDifferentClientTests extends SpringIntegrationRegistryTests {
    @Test
    void testSecondThreadLoses() throws Exception {
        LatchkeyLockRegistry registry2 = new LatchkeyLockRegistry(newClient(), OPTIONS);
        for (int i = 0; i < ROUNDS; i++) {
            twoThreads(registry, registry2);
        }
    }

    @Test
    void testBothLock() throws Exception {
        LatchkeyLockRegistry registry2 = new LatchkeyLockRegistry(newClient(), OPTIONS);
        for (int i = 0; i < ROUNDS; i++) {
            List<String> locked = new CopyOnWriteArrayList<>();
            CountDownLatch latch = new CountDownLatch(2);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            pool.execute(lockAndRecord(registry, "1", locked, latch));
            pool.execute(lockAndRecord(registry2, "2", locked, latch));
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
            // eventually they both get the lock and release it
            assertThat(locked.contains("1")).isTrue();
            assertThat(locked.contains("2")).isTrue();
            pool.shutdownNow();
        }
    }

    private static Runnable lockAndRecord(LatchkeyLockRegistry registry, String who, List<String> locked, CountDownLatch latch) {
        return () -> {
            Lock lock = registry.obtain("foo");
            try {
                lock.lockInterruptibly();
                locked.add(who);
                latch.countDown();
                lock.unlock();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    /** Theirs makes a client per task; ours, a registry per task on two clients (a manager per task would be a connection pool each). */
    @Test
    void testOnlyOneLock() throws Exception {
        List<LockManager> clients = List.of(client, newClient());
        for (int i = 0; i < ROUNDS; i++) {
            BlockingQueue<String> locked = new LinkedBlockingQueue<>();
            CountDownLatch latch = new CountDownLatch(20);
            ExecutorService pool = Executors.newFixedThreadPool(20);
            List<Callable<Boolean>> tasks = new ArrayList<>();
            for (int j = 0; j < 20; j++) {
                LockManager taskClient = clients.get(j % 2);
                tasks.add(() -> {
                    Lock lock = new LatchkeyLockRegistry(taskClient, OPTIONS).obtain("foo");
                    boolean held = false;
                    try {
                        if (locked.isEmpty() && lock.tryLock(Long.MAX_VALUE, TimeUnit.MILLISECONDS)) {
                            held = true;
                            if (locked.isEmpty()) {
                                locked.add("done");
                                return true;
                            }
                        }
                    } finally {
                        if (held) lock.unlock(); // theirs unlocks unconditionally and ignores the not-owned exception
                        latch.countDown();
                    }
                    return false;
                });
            }
            pool.invokeAll(tasks);
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(locked.size()).isEqualTo(1);
            assertThat(locked.contains("done")).isTrue();
            pool.shutdownNow();
        }
    }

    /** Their sleeps are the holders' work (to give an overlap the time to show), not waits for a condition. */
    @Test
    void testExclusiveAccess() throws Exception {
        Lock lock1 = new LatchkeyLockRegistry(client, OPTIONS).obtain("foo");
        LockManager client2 = newClient();
        BlockingQueue<Integer> data = new LinkedBlockingQueue<>();
        CountDownLatch latch1 = new CountDownLatch(1);
        lock1.lockInterruptibly();
        taskExecutor.execute(() -> {
            Lock lock2 = new LatchkeyLockRegistry(client2, OPTIONS).obtain("foo");
            try {
                latch1.countDown();
                lock2.lockInterruptibly();
                data.add(4);
                Thread.sleep(10);
                data.add(5);
                Thread.sleep(10);
                data.add(6);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock2.unlock();
            }
        });
        assertThat(latch1.await(10, TimeUnit.SECONDS)).isTrue();
        data.add(1);
        Thread.sleep(100);
        data.add(2);
        Thread.sleep(100);
        data.add(3);
        lock1.unlock();
        for (int i = 0; i < 6; i++) {
            Integer integer = data.poll(10, TimeUnit.SECONDS);
            assertThat(integer).isNotNull();
            assertThat(integer.intValue()).isEqualTo(i + 1);
        }
    }

    /** Theirs sleeps 500 ms past a 100 ms TTL first; here the other client simply waits for the key (1 s TTL, {@link #NO_HEARTBEAT}). */
    @Test
    void testOutOfDateLockTaken() throws Exception {
        Lock lock1 = new LatchkeyLockRegistry(client, NO_HEARTBEAT).obtain("foo");
        LockManager client2 = newClient();
        BlockingQueue<Integer> data = new LinkedBlockingQueue<>();
        CountDownLatch latch = new CountDownLatch(1);
        lock1.lockInterruptibly();
        taskExecutor.execute(() -> {
            Lock lock2 = new LatchkeyLockRegistry(client2, NO_HEARTBEAT).obtain("foo");
            try {
                lock2.lockInterruptibly();
                data.add(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock2.unlock();
            }
            latch.countDown();
        });
        assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        data.add(2);
        assertThatThrownBy(lock1::unlock).isInstanceOf(ConcurrentModificationException.class);
        for (int i = 0; i < 2; i++) {
            Integer integer = data.poll(10, TimeUnit.SECONDS);
            assertThat(integer).isNotNull();
            assertThat(integer.intValue()).isEqualTo(i + 1);
        }
    }

    /** The holder renews by hand ({@link #NO_HEARTBEAT}) while its work outlasts the TTL (theirs: 700 ms of 500; ours 1.7 s of 1 s); the other client must wait. */
    @Test
    void testRenewLock() throws Exception {
        LatchkeyLockRegistry registry = new LatchkeyLockRegistry(client, NO_HEARTBEAT);
        Lock lock1 = registry.obtain("foo");
        LockManager client2 = newClient();
        BlockingQueue<Integer> data = new LinkedBlockingQueue<>();
        CountDownLatch latch1 = new CountDownLatch(2);
        CountDownLatch latch2 = new CountDownLatch(1);
        lock1.lockInterruptibly();
        taskExecutor.execute(() -> {
            Lock lock2 = new LatchkeyLockRegistry(client2, NO_HEARTBEAT).obtain("foo");
            try {
                latch1.countDown();
                lock2.lockInterruptibly();
                data.add(4);
                Thread.sleep(10);
                data.add(5);
                Thread.sleep(10);
                data.add(6);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock2.unlock();
            }
        });
        taskExecutor.execute(() -> {
            try {
                latch1.countDown();
                Thread.sleep(1500);
                data.add(1);
                Thread.sleep(100);
                data.add(2);
                Thread.sleep(100);
                data.add(3);
                latch2.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(latch1.await(10, TimeUnit.SECONDS)).isTrue();
        while (!latch2.await(50, TimeUnit.MILLISECONDS)) {
            registry.renewLock("foo");
        }
        lock1.unlock();
        for (int i = 0; i < 6; i++) {
            Integer integer = data.poll(10, TimeUnit.SECONDS);
            assertThat(integer).isNotNull();
            assertThat(integer.intValue()).isEqualTo(i + 1);
        }
    }

}
