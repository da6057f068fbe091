package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockListener;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.mem.MemConditionalStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link LockContext#withThreadFactory} and {@link LockContext#withScheduler}: a manager's
 * heartbeats, its events and its leases' deadlines run on the application's threads, and closing
 * the manager leaves the application's timer running.
 */
class ApplicationThreadsTest {

    @Test
    void heartbeatsAndEventsRunOnTheApplicationsThreadsAndClosingLeavesItsTimerRunning() throws Exception {
        AtomicInteger made = new AtomicInteger();
        ThreadFactory appThreads = r -> {
            Thread t = new Thread(r, "app-locks-" + made.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        AtomicInteger timerTasks = new AtomicInteger();
        ScheduledThreadPoolExecutor appTimer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "app-timer");
            t.setDaemon(true);
            return t;
        }) {
            @Override
            protected <V> RunnableScheduledFuture<V> decorateTask(Runnable r, RunnableScheduledFuture<V> task) {
                timerTasks.incrementAndGet();
                return task;
            }
        };
        List<String> replacedOn = new CopyOnWriteArrayList<>();  // the threads the store saw writes to a record on
        List<String> eventsOn = new CopyOnWriteArrayList<>();    // the threads the listener was called on
        CountDownLatch renewedEvents = new CountDownLatch(2);
        LockListener listener = new LockListener() {
            @Override
            public void renewed(String scheme, String key, Duration validFor) {
                eventsOn.add(Thread.currentThread().getName());
                renewedEvents.countDown();
            }
        };
        LockContext context = LockContext.defaults().withThreadFactory(appThreads).withScheduler(appTimer).withListener(listener);
        try {
            List<String> renewedOn;
            try (LockManager locks = new ConditionalStoreLockManager(new ReplaceThreads(MemConditionalStore.named("app-threads-" + System.nanoTime()), replacedOn),
                    context, Set.of())) {
                Lease lease = locks.acquire("job", Duration.ofSeconds(5), LeaseOptions.ttl(Duration.ofSeconds(2)).withHeartbeat(Duration.ofMillis(50)));
                assertThat(renewedEvents.await(30, TimeUnit.SECONDS)).as("two heartbeats reported").isTrue();
                renewedOn = List.copyOf(replacedOn); // while held, every replace is a heartbeat (the release writes too)
                lease.release();
            }
            assertThat(renewedOn).isNotEmpty().allMatch(name -> name.startsWith("app-locks-"));
            assertThat(eventsOn).allMatch(name -> name.startsWith("app-locks-"));
            assertThat(made.get()).as("threads the factory made: a renewer and the event thread").isGreaterThanOrEqualTo(2);
            assertThat(timerTasks.get()).as("lease tasks scheduled on the application's timer").isPositive();

            assertThat(appTimer.isShutdown()).as("closing the manager shut the application's timer down").isFalse();
            assertThat(appTimer.schedule(() -> "still running", 0, TimeUnit.MILLISECONDS).get(30, TimeUnit.SECONDS))
                    .isEqualTo("still running");
        } finally {
            appTimer.shutdownNow();
        }
    }

    /** A store that notes which thread each conditional replace (a renewal, a release) arrives on. */
    private static final class ReplaceThreads implements ConditionalStore {
        private final ConditionalStore store;
        private final List<String> replacedOn;

        ReplaceThreads(ConditionalStore store, List<String> replacedOn) {
            this.store = store;
            this.replacedOn = replacedOn;
        }

        @Override public Optional<StoredRecord> read(String name) { return store.read(name); }
        @Override public Optional<String> create(String name, byte[] data) { return store.create(name, data); }
        @Override public boolean delete(String name, String expectedVersion) { return store.delete(name, expectedVersion); }
        @Override public List<String> list(String namePrefix) { return store.list(namePrefix); }
        @Override public String describe() { return store.describe(); }
        @Override public void close() { store.close(); }

        @Override
        public Optional<String> replace(String name, String expectedVersion, byte[] data) {
            replacedOn.add(Thread.currentThread().getName());
            return store.replace(name, expectedVersion, data);
        }
    }
}
