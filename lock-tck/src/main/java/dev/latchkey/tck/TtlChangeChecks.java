package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@link Lease#renew(Duration)} tests of {@link LockManagerContract}: after a renewal with a
 * longer TTL the store keeps the key past the old TTL with no renewal after it; after one with a
 * shorter TTL another holder gets the key once the shorter TTL has passed — never before, and
 * before the old TTL would have ended; the lease's {@code ttl()} and {@code expiresAt()}, and
 * {@code inspect}'s {@code expiresAt} where the backend reports one, follow the new TTL; after
 * {@link Lease#release(Duration)} the key stays taken for that long, and then frees without anyone
 * releasing it. Every time
 * bound is a lower bound on the monotonic clock, or several short TTLs of slack.
 */
record TtlChangeChecks(LockManagerContract contract) {

    /** A TTL {@code n} short TTLs long, within the backend's bounds. */
    private Duration shortTtls(int n) {
        Duration wanted = contract.shortTtl().multipliedBy(n);
        return wanted.compareTo(contract.maxTtl()) > 0 ? contract.maxTtl() : wanted;
    }

    void renewWithLongerTtlHoldsPastTheOldTtl() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("renew-longer");
        // keepAliveTtl: a store that paces writes (GCS) or a loaded machine has time for the renewal
        Duration ttl = contract.keepAliveTtl();
        Duration longer = shortTtls(6);
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner(contract.owner("stretcher")));
        Instant wallBefore = Instant.now();
        long renewing = System.nanoTime();
        TckFixture.renewWhileValid(lease, longer);

        assertThat(lease.ttl()).as("ttl() after renew(%s)", longer).isEqualTo(longer);
        assertThat(lease.expiresAt()).as("expiresAt() after renew(%s) of a %s lease", longer, ttl)
                .isAfter(wallBefore.plus(ttl)).isBeforeOrEqualTo(Instant.now().plus(longer));
        Optional<Instant> stored = b.inspect(k).map(LockInfo::expiresAt);
        if (stored.isPresent()) {
            assertThat(stored.get()).as("inspect's expiresAt after renew(%s) of a %s lease", longer, ttl)
                    .isAfter(wallBefore.plus(ttl));
        }
        // No renewal from here on: only the store's hold by the new TTL keeps the contender out,
        // until a quarter of the old TTL after the old one would have ended
        while (System.nanoTime() - renewing < ttl.toNanos() * 5 / 4) {
            assertThat(contract.tryTake(b, k, contract.abandoned("contender")))
                    .as("contender %d ms after renew(%s) of a %s lease", TckFixture.elapsedMillis(renewing), longer, ttl)
                    .isEmpty();
            assertThat(lease.isValid()).as("lease %d ms after renew(%s)", TckFixture.elapsedMillis(renewing), longer).isTrue();
            TckFixture.pace(contract.pollInterval());
        }
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(lease.leaseId());
        lease.release();
        assertThat(b.inspect(k)).isEmpty();
    }

    void renewWithShorterTtlFreesTheKeySooner() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("renew-shorter");
        Duration ttl = shortTtls(4);
        Duration shorter = contract.shortTtl();
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner(contract.owner("shrinker")));
        Instant wallBefore = Instant.now();
        long renewing = System.nanoTime();
        TckFixture.renewWhileValid(lease, shorter);

        assertThat(lease.ttl()).as("ttl() after renew(%s)", shorter).isEqualTo(shorter);
        assertThat(lease.expiresAt()).as("expiresAt() after renew(%s) of a %s lease", shorter, ttl)
                .isBeforeOrEqualTo(Instant.now().plus(shorter)).isAfter(wallBefore);
        Optional<Instant> stored = b.inspect(k).map(LockInfo::expiresAt);
        if (stored.isPresent()) {
            assertThat(stored.get()).as("inspect's expiresAt after renew(%s) of a %s lease", shorter, ttl)
                    .isBefore(wallBefore.plus(ttl));
        }
        Lease next = contract.pollUntilAcquired(b, k, contract.longLease("successor"), contract.takeoverLimit());
        Duration after = Duration.ofNanos(System.nanoTime() - renewing);
        assertThat(after).as("takeover after renew(%s) of a %s lease", shorter, ttl)
                .isGreaterThanOrEqualTo(shorter)
                .isLessThan(ttl);
        assertThat(lease.isValid()).as("the shortened lease once another holds the key").isFalse();
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(next.leaseId());
        if (LockManagerContract.declares(a, Capability.FENCING_TOKENS)) {
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
    }

    void releaseKeepingTheKeyHoldsItThatLong() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("release-keeping");
        Duration keep = contract.shortTtl();
        // heartbeating, with a longer TTL: only a release that stops both lets the key go after keep
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(contract.keepAliveTtl()).withOwner(contract.owner("keeper")));
        AtomicBoolean lost = new AtomicBoolean();
        lease.onLost(e -> lost.set(true));
        long releasing = System.nanoTime();
        TckFixture.releaseKeepingWhileValid(lease, keep);

        assertThat(lease.isValid()).as("a lease released with a keep").isFalse();
        assertThatThrownBy(lease::renew).isInstanceOf(IllegalStateException.class);
        lease.release(); // released already: nothing to do
        assertThat(contract.tryTake(b, k, contract.abandoned("contender")))
                .as("contender %d ms after release(%s)", TckFixture.elapsedMillis(releasing), keep).isEmpty();
        Lease next = contract.pollUntilAcquired(b, k, contract.longLease("successor"), contract.takeoverLimit());
        assertThat(Duration.ofNanos(System.nanoTime() - releasing)).as("takeover after release(%s)", keep)
                .isGreaterThanOrEqualTo(keep);
        assertThat(lost).as("lease-lost listener of a lease released with a keep").isFalse();
        if (LockManagerContract.declares(a, Capability.FENCING_TOKENS)) {
            assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        }
    }

    void renewWithTheSameTtlIsRenew() throws Exception {
        LockManager a = contract.newManager();
        String k = contract.key("renew-same");
        Duration ttl = contract.keepAliveTtl();
        Lease lease = contract.hold(a, k, LeaseOptions.ttl(ttl).withoutHeartbeat().withOwner(contract.owner("same")));
        Instant wallBefore = Instant.now();
        TckFixture.renewWhileValid(lease, ttl);
        assertThat(lease.ttl()).isEqualTo(ttl);
        assertThat(lease.expiresAt()).isAfterOrEqualTo(wallBefore.plus(ttl).minusMillis(1));
        assertThatThrownBy(() -> lease.renew(LeaseOptions.MIN_TTL.minusMillis(1)))
                .as("renew below the minimum TTL").isInstanceOf(IllegalArgumentException.class);
        assertThat(lease.ttl()).as("ttl() after a refused renew").isEqualTo(ttl);
        assertThat(lease.isValid()).isTrue();
        lease.release();
    }
}
