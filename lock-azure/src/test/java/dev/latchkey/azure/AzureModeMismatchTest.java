package dev.latchkey.azure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.tck.CriticalSectionChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Clients of one container and prefix whose URIs differ only in {@code mode=} share each key's
 * blob: they must never both hold a key. A blob belongs to the mode that made it; a client of the
 * other mode is refused with a non-retriable error naming the mismatch, and the holder of the
 * blob's own mode is left undisturbed, while held and after release.
 */
class AzureModeMismatchTest {
    private static final LeaseOptions HOLD = LeaseOptions.ttl(Duration.ofSeconds(30)).withoutHeartbeat();
    private static final List<String> MODES = List.of("etag", "lease");

    private final String tag = "mode-" + UUID.randomUUID().toString().substring(0, 8);

    private static String other(String mode) {
        return mode.equals("etag") ? "lease" : "etag";
    }

    private static void assertRefused(ThrowingCallable call, String blobMode, String clientMode) {
        assertThatThrownBy(call).isInstanceOfSatisfying(LockBackendException.class, e -> assertMismatch(e, blobMode, clientMode));
    }

    private static void assertMismatch(LockBackendException e, String blobMode, String clientMode) {
        assertThat(e.isRetriable()).as("only a change of configuration helps: %s", e.getMessage()).isFalse();
        assertThat(e.getMessage()).contains("held in (or was last used by) mode=" + blobMode)
                .contains("this client uses mode=" + clientMode)
                .contains("every client of a container and prefix must use one mode")
                .doesNotContain("accountKey");
    }

    @ParameterizedTest(name = "holder mode={0}")
    @ValueSource(strings = {"etag", "lease"})
    void aClientOfTheOtherModeIsRefusedAndTheHolderKeepsTheKey(String holderMode) {
        String contenderMode = other(holderMode);
        String key = tag + "-held-by-" + holderMode;
        try (LockManager holders = Latchkey.open(Azurite.uri(holderMode));
             LockManager contender = Latchkey.open(Azurite.uri(contenderMode))) {
            Lease held = holders.tryAcquire(key, HOLD).orElseThrow();

            assertRefused(() -> contender.tryAcquire(key, HOLD), holderMode, contenderMode);
            assertRefused(() -> contender.acquire(key, Duration.ofSeconds(5), HOLD), holderMode, contenderMode);
            assertRefused(() -> contender.inspect(key), holderMode, contenderMode);
            assertRefused(() -> contender.forceRelease(key), holderMode, contenderMode);

            held.renew(); // the contender gave back whatever it took on the way
            assertThat(held.isValid()).isTrue();
            assertThat(holders.inspect(key)).hasValueSatisfying(i -> assertThat(i.leaseId()).isEqualTo(held.leaseId()));
            held.release();

            // free now, but still the holder mode's blob, with that mode's fencing counter: refused too
            assertRefused(() -> contender.tryAcquire(key, HOLD), holderMode, contenderMode);
            Lease next = holders.tryAcquire(key, HOLD).orElseThrow();
            assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
            next.release();
        }
    }

    /**
     * The race: for each fresh key, clients of both modes (two managers per mode, two threads each)
     * take it repeatedly. One mode starts first, in turns, so each mode makes blobs that the other
     * then races for; the other mode's threads join as soon as the first attempt has returned, while
     * the first mode's holders come and go. Every outcome but a lease is "busy" or the mismatch; at
     * no time do two hold, and only one mode ever holds a key.
     */
    @Test
    void clientsOfBothModesRacingForOneKeyNeverBothHold() throws Exception {
        int rounds = 6;
        int attempts = 6;
        List<LockManager> managers = new ArrayList<>();
        List<String> modeOf = new ArrayList<>();
        for (String mode : MODES) {
            for (int i = 0; i < 2; i++) {
                managers.add(Latchkey.open(Azurite.uri(mode)));
                modeOf.add(mode);
            }
        }
        int threads = managers.size() * 2;
        CriticalSectionChecker checker = new CriticalSectionChecker();
        List<String> failures = new CopyOnWriteArrayList<>();
        Set<String> everHeld = ConcurrentHashMap.newKeySet();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < rounds; round++) {
                String key = tag + "-race-" + round;
                String first = MODES.get(round % 2);
                Set<String> heldBy = ConcurrentHashMap.newKeySet();
                CountDownLatch go = new CountDownLatch(1);
                CountDownLatch firstReturned = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    LockManager m = managers.get(t % managers.size());
                    String mode = modeOf.get(t % managers.size());
                    done.add(pool.submit(() -> {
                        (mode.equals(first) ? go : firstReturned).await();
                        try {
                            for (int a = 0; a < attempts; a++) {
                                Optional<Lease> got;
                                try {
                                    got = m.tryAcquire(key, HOLD);
                                } catch (LockBackendException e) {
                                    firstReturned.countDown();
                                    try {
                                        assertMismatch(e, other(mode), mode);
                                    } catch (AssertionError wrong) {
                                        failures.add(mode + " client: " + e);
                                    }
                                    continue;
                                }
                                firstReturned.countDown();
                                if (got.isEmpty()) continue;
                                Lease lease = got.get();
                                heldBy.add(mode);
                                checker.enter(lease.fencingToken());
                                try {
                                    checker.work();
                                    Thread.sleep(5); // hold a little, so that an overlapping holder would show
                                } finally {
                                    checker.exit();
                                }
                                try {
                                    lease.release();
                                } catch (LockBackendException e) {
                                    // a probe of the other mode kept the release from landing: it is retried in the background
                                    if (!e.isRetriable()) failures.add(mode + " release: " + e);
                                }
                            }
                        } finally {
                            firstReturned.countDown(); // whatever happened, the other mode joins
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : done) f.get(5, TimeUnit.MINUTES);
                assertThat(heldBy).as("modes whose clients held key %s", key).hasSizeLessThanOrEqualTo(1);
                everHeld.addAll(heldBy);
            }
        } finally {
            pool.shutdownNow();
            managers.forEach(LockManager::close);
        }
        assertThat(failures).as("outcomes other than a lease, busy, or the mismatch").isEmpty();
        assertThat(checker.overlaps()).as("overlapping holders (%s)", checker.summary()).isZero();
        assertThat(everHeld).as("modes that held some key: the race covered blobs of both").containsExactlyInAnyOrderElementsOf(MODES);
        assertThat(checker.counter()).isEqualTo(checker.sections());
    }
}
