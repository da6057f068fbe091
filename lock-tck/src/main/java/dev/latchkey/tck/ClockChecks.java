package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The clock tests of {@link LockManagerContract}: the manager reads the clocks of the
 * {@link dev.latchkey.spi.LockContext} it was built with (else the skew tests would test nothing), and a
 * wall clock an hour ahead or behind, on the holder or the contender, takes nothing before the TTL has
 * passed by the store's judgement and never takes a heartbeating lease.
 */
record ClockChecks(LockManagerContract contract) {

    void managerUsesTheContextItWasGiven() throws Exception {
        ContextClock clock = new ContextClock(Duration.ofDays(1));
        LockManager m = contract.manager(LockContext.defaults().withTime(clock));
        String invariant = "newManager(context) must build the manager with the context it was given (its"
                + " TimeSource runs " + clock.offset() + " ahead)";
        Instant before = Instant.now().plus(clock.offset());
        Lease lease;
        try {
            lease = contract.hold(m, contract.key("context"), contract.longLease("holder"));
        } catch (LockBackendException e) {
            throw new AssertionError(invariant + ": tryAcquire failed — does the backend mix the context's"
                    + " nanoTime() with System.nanoTime()?", e);
        }
        Instant after = Instant.now().plus(clock.offset());
        assertThat(clock.monotonicReads()).as("%s: reads of its monotonic clock while acquiring", invariant).isPositive();
        // an hour either side absorbs a wall-clock step; a manager on the system clock is a day off
        assertThat(lease.acquiredAt()).as("%s: the lease's acquiredAt", invariant)
                .isBetween(before.minus(Duration.ofHours(1)), after.plus(Duration.ofHours(1)));
        assertThat(lease.isValid()).as("%s: the lease just acquired is valid", invariant).isTrue();
    }

    void skewedWallClockTakesNothingEarly() throws Exception {
        record Skew(Duration offset, boolean holderSkewed, LockManager holder, LockManager contender) {
            String label() {
                return "wall clock " + offset.abs() + (offset.isNegative() ? " behind" : " ahead")
                        + " on the " + (holderSkewed ? "holder" : "contender");
            }
        }
        List<Skew> cases = new ArrayList<>();
        for (Duration offset : List.of(Duration.ofHours(1), Duration.ofHours(-1))) {
            for (boolean holderSkewed : List.of(false, true)) {
                LockManager skewed = contract.manager(LockContext.defaults().withTime(TimeSource.wallClockOffsetBy(offset)));
                LockManager plain = contract.newManager();
                cases.add(holderSkewed ? new Skew(offset, true, skewed, plain) : new Skew(offset, false, plain, skewed));
            }
        }
        TckFixture.runConcurrently(cases.size(), i -> {
            Skew c = cases.get(i);
            try {
                skewCase(c.holder(), c.contender(), "skew" + i);
            } catch (AssertionError e) {
                throw new AssertionError(c.label() + ": " + e.getMessage(), e);
            }
            return null;
        });
    }

    private void skewCase(LockManager holder, LockManager contender, String name) throws Exception {
        Duration ttl = contract.shortTtl();
        String liveKey = contract.key(name + "-live");
        String deadKey = contract.key(name + "-abandoned");

        // The live lease outlasts the whole observation window even if a loaded machine stalls
        // its heartbeat: this test is about clocks, heartbeatKeepsLeaseAliveUnattended about heartbeats.
        Lease live = contract.hold(holder, liveKey, LeaseOptions.ttl(ttl.multipliedBy(4))
                .withHeartbeat(ttl.dividedBy(3)).withOwner(contract.owner("live")));
        long deadStart = System.nanoTime();
        Lease dead = contract.hold(holder, deadKey, contract.abandoned("dead"));
        Long takenAt = null;
        while (System.nanoTime() - deadStart < ttl.toNanos() * 5 / 2) {
            assertThat(contract.tryTake(contender, liveKey, contract.longLease("contender")))
                    .as("contender on a heartbeating lease, %d ms in", TckFixture.elapsedMillis(deadStart)).isEmpty();
            if (takenAt == null && contract.tryTake(contender, deadKey, contract.longLease("contender")).isPresent()) {
                takenAt = System.nanoTime();
            }
            TckFixture.pace(contract.pollInterval());
        }
        if (takenAt == null) {
            contract.pollUntilAcquired(contender, deadKey, contract.longLease("contender"), contract.takeoverLimit());
            takenAt = System.nanoTime();
        }
        assertThat(Duration.ofNanos(takenAt - deadStart)).as("takeover of the abandoned lease after (TTL %s)", ttl)
                .isGreaterThanOrEqualTo(ttl);
        assertThat(dead.isValid()).isFalse();
        assertThat(live.isValid()).as("heartbeating lease").isTrue();
        assertThat(contender.inspect(liveKey).map(LockInfo::leaseId)).contains(live.leaseId());
    }
}
