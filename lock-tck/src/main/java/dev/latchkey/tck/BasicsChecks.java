package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.GENEROUS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.LockTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The single-holder tests of {@link LockManagerContract}: a held key is refused to every other
 * manager and to its own (locks are not reentrant), and {@code inspect} shows its holder, owner,
 * metadata and token; threads of one manager racing for a free key have one winner; keys are
 * independent; a released key is free at once, for the next holder, under a new lease id;
 * {@code tryAcquire} never waits, and {@code acquire} waits for a release, or times out after its
 * {@code maxWait} with a {@link LockTimeoutException} naming the holder. Every bound is an ordering
 * or tens of seconds, so a loaded machine slows these tests without failing them.
 */
record BasicsChecks(LockManagerContract contract) {
    void singleHolder() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("single");
        Lease lease = contract.hold(a, k, contract.longLease("holder"));

        assertThat(lease.key()).isEqualTo(k);
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.leaseId()).isNotBlank();
        assertThat(lease.owner()).isEqualTo(contract.owner("holder"));
        assertThat(contract.tryTake(b, k, contract.longLease("contender"))).as("second manager while held").isEmpty();
        assertThat(contract.tryTake(a, k, contract.longLease("contender"))).as("same manager again while held (locks are not reentrant)").isEmpty();

        LockInfo info = b.inspect(k).orElseThrow(() -> new AssertionError("inspect shows no holder of a held key"));
        assertThat(info.key()).isEqualTo(k);
        assertThat(info.leaseId()).isEqualTo(lease.leaseId());
        assertThat(info.owner()).isEqualTo(contract.owner("holder"));
        assertThat(info.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(lease.isValid()).isTrue();
    }

    void ownerAndMetadataRoundTripThroughInspect() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("metadata");
        Map<String, String> metadata = Map.of("job", "nightly-export", "run.id", "42",
                "note", "'quoted' \"double\" =&%; \u00fcn\u00efc\u00f6d\u00e9 \uD83D\uDD12", "empty", "");
        String owner = contract.owner("ops") + " (host: build-7; pid 4242)";
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner(owner).withMetadata(metadata));

        LockInfo info = b.inspect(k).orElseThrow(() -> new AssertionError("inspect shows no holder of a held key"));
        assertThat(info.owner()).isEqualTo(owner);
        assertThat(info.metadata()).isEqualTo(metadata);
        assertThat(lease.info().metadata()).isEqualTo(metadata);
    }

    void racingTryAcquireOnOneManagerHasOneWinner() throws Exception {
        LockManager a = contract.newManager();
        String k = contract.key("same-manager-race");
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Optional<Lease>>> attempts = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                attempts.add(pool.submit(() -> {
                    go.await();
                    return contract.tryTake(a, k, contract.longLease("racer"));
                }));
            }
            go.countDown();
            int winners = 0;
            for (Future<Optional<Lease>> f : attempts) {
                if (f.get(GENEROUS.toSeconds(), TimeUnit.SECONDS).isPresent()) winners++;
            }
            assertThat(winners).as("threads of one manager racing tryAcquire on a free key").isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    void twoKeysAreIndependent() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k1 = contract.key("one");
        String k2 = contract.key("two");
        Lease l1 = contract.hold(a, k1, contract.longLease("one"));
        Lease l2 = contract.hold(b, k2, contract.longLease("two"));

        assertThat(contract.tryTake(b, k1, contract.longLease("x"))).isEmpty();
        assertThat(contract.tryTake(a, k2, contract.longLease("x"))).isEmpty();
        assertThat(a.inspect(k1).map(LockInfo::leaseId)).contains(l1.leaseId());
        assertThat(a.inspect(k2).map(LockInfo::leaseId)).contains(l2.leaseId());

        l1.release();
        assertThat(l2.isValid()).as("releasing one key leaves the other held").isTrue();
        assertThat(a.inspect(k2).map(LockInfo::leaseId)).contains(l2.leaseId());
        assertThat(contract.tryTake(a, k2, contract.longLease("x"))).isEmpty();
    }

    void releaseThenReacquire() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("release");
        Lease first = contract.hold(a, k, contract.longLease("first"));
        first.release();

        assertThat(first.isValid()).as("a released lease is not valid").isFalse();
        first.release(); // idempotent once it succeeded
        assertThat(b.inspect(k)).as("inspect after release").isEmpty();

        Lease second = contract.hold(b, k, contract.longLease("second"));
        assertThat(second.leaseId()).isNotEqualTo(first.leaseId());
        second.close();
        Lease third = contract.hold(a, k, contract.longLease("third"));
        assertThat(third.isValid()).isTrue();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(third.leaseId());
    }

    void inspectOfFreeKeyIsEmpty() throws Exception {
        LockManager a = contract.newManager();
        assertThat(a.inspect(contract.key("never-used"))).isEmpty();
    }

    void tryAcquireNeverWaits() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("no-wait");
        Lease holder = contract.hold(a, k, contract.longLease("holder"));
        // The holder lets go after 5 s: a tryAcquire that waits, for however short a time, ends up
        // with the lease; one that never waits comes back empty long before.
        CompletableFuture<Void> release = CompletableFuture.runAsync(() -> {
            try {
                TckFixture.pace(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            holder.release();
        });
        Optional<Lease> attempt = TckFixture.within(GENEROUS, "tryAcquire on a held key",
                () -> contract.tryTake(b, k, contract.longLease("contender")));
        assertThat(attempt).as("tryAcquire on a key held for 5 more seconds (it must not wait)").isEmpty();
        release.get(GENEROUS.toSeconds(), TimeUnit.SECONDS);
    }

    void acquireTimesOutNamingTheHolder() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("timeout");
        String holder = contract.owner("holder-to-name");
        contract.hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withOwner(holder));

        Duration maxWait = Duration.ofMillis(300);
        long start = System.nanoTime();
        assertThatThrownBy(() -> contract.track(b.acquire(k, maxWait, contract.longLease("waiter"))))
                .isExactlyInstanceOf(LockTimeoutException.class)
                .hasMessageContaining(holder)
                .satisfies(t -> {
                    LockTimeoutException e = (LockTimeoutException) t;
                    assertThat(e.key()).isEqualTo(k);
                    e.holder().ifPresent(h -> assertThat(h.owner()).isEqualTo(holder));
                });
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time acquire waited before timing out")
                .isGreaterThanOrEqualTo(maxWait);
    }

    void acquireWaitsForRelease() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("handoff");
        Lease first = contract.hold(a, k, contract.longLease("first"));
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
            waiting.countDown();
            return contract.track(b.acquire(k, GENEROUS.multipliedBy(2), contract.longLease("waiter")));
        });
        // The waiter must be seen waiting on the held key — inside acquire for a whole second
        // without returning — before the key is released; an acquire that never waits has thrown by then.
        assertThat(waiting.await(GENEROUS.toSeconds(), TimeUnit.SECONDS)).as("waiter started").isTrue();
        assertThatThrownBy(() -> waiter.get(1, TimeUnit.SECONDS), "acquire on a held key returned (or threw) before the key was released")
                .isInstanceOf(TimeoutException.class);
        first.release();
        Lease second = waiter.get(GENEROUS.toSeconds() * 2 + 10, TimeUnit.SECONDS);
        assertThat(second.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(second.leaseId());
        if (LockManagerContract.declares(a, Capability.FENCING_TOKENS)) {
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        }
    }
}
