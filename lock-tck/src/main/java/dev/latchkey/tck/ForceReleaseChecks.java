package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.show;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;

/**
 * The force-release tests of {@link LockManagerContract}: breaking a holder frees the key for the next
 * without letting the broken holder renew, release or disturb it; breaking by lease id breaks that
 * lease and no later one; breaking a free key reports {@code false}; and clients of one key configured
 * differently (another mode, table or prefix spelling) never both hold it — the second excludes or
 * fails with a non-retriable error naming the mismatch.
 */
record ForceReleaseChecks(LockManagerContract contract) {

    void forceReleaseBreaksTheHolderWithoutDisturbingTheNext() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        LockManager c = contract.newManager();
        String k = contract.key("force");
        Lease old = contract.hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat().withOwner(contract.owner("old")));

        assertThat(b.forceRelease(k)).as("forceRelease of a held key").isTrue();
        assertThat(b.inspect(k)).as("inspect after forceRelease").isEmpty();
        Lease next = contract.hold(c, k, contract.longLease("next"));

        assertThatThrownBy(old::renew).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(old::release).isInstanceOf(LeaseLostException.class);
        assertThat(old.isValid()).isFalse();

        assertThat(next.isValid()).as("new holder after the old one's failed renew and release").isTrue();
        for (LockManager m : List.of(a, b, c)) {
            assertThat(m.inspect(k).map(LockInfo::leaseId)).contains(next.leaseId());
        }
        TckFixture.renewWhileValid(next);
        assertThat(contract.tryTake(a, k, contract.longLease("x"))).isEmpty();
        if (contract.declares(a, Capability.FENCING_TOKENS)) {
            assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
        }
        next.release();
        assertThat(a.inspect(k)).isEmpty();
    }

    void brokenHolderCannotReleaseTheFreedKey() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("force-free");
        Lease old = contract.hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat().withOwner(contract.owner("old")));
        assertThat(b.forceRelease(k)).isTrue();

        assertThatThrownBy(old::release, "release after being broken, nobody else holding")
                .isInstanceOf(LeaseLostException.class);
        Lease next = contract.hold(b, k, contract.longLease("next"));
        assertThatThrownBy(old::renew).isInstanceOf(LeaseLostException.class);
        assertThat(next.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(next.leaseId());
    }

    void forceReleaseOfALeaseIdBreaksThatLeaseAndNoOther() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        String k = contract.key("force-lease-id");
        Lease old = contract.hold(a, k, LeaseOptions.ttl(Duration.ofSeconds(60)).withoutHeartbeat().withOwner(contract.owner("old")));
        String inspected = b.inspect(k).map(LockInfo::leaseId)
                .orElseThrow(() -> new AssertionError("inspect shows no holder of a held key"));

        assertThat(b.forceRelease(k, "not-" + inspected)).as("forceRelease naming another lease id").isFalse();
        assertThat(old.isValid()).as("holder after a forceRelease that named another lease").isTrue();
        assertThat(b.inspect(k).map(LockInfo::leaseId)).contains(old.leaseId());

        assertThat(b.forceRelease(k, inspected)).as("forceRelease naming the holder's lease id").isTrue();
        assertThatThrownBy(old::renew, "renew of the broken lease").isInstanceOf(LeaseLostException.class)
                .satisfies(e -> assertThat(((LeaseLostException) e).reason())
                        .isIn(LeaseLostException.Reason.BROKEN, LeaseLostException.Reason.SESSION_ENDED));

        // a successor that came after the inspect is left alone
        Lease next = contract.hold(b, k, contract.longLease("next"));
        assertThat(a.forceRelease(k, inspected)).as("forceRelease of the old lease id once a successor holds").isFalse();
        assertThat(next.isValid()).isTrue();
        assertThat(a.inspect(k).map(LockInfo::leaseId)).contains(next.leaseId());
        next.release();
        assertThat(a.forceRelease(k, next.leaseId())).as("forceRelease of a released lease").isFalse();
    }

    void clientsConfiguredDifferentlyNeverBothHold() throws Exception {
        List<LockManagerContract.OtherConfiguration> others = contract.otherConfigurations();
        Assumptions.assumeFalse(others.isEmpty(),
                "otherConfigurations() is empty: the backend declares no other way to address its locks");
        List<String> failures = new ArrayList<>();
        int n = 0;
        int raced = 0;
        for (LockManagerContract.OtherConfiguration other : others) {
            for (boolean otherHolds : List.of(false, true)) {
                String k = contract.key("configs-" + n++);
                LockManager usual = contract.newManager();
                LockManager different = contract.fx.track(other.open(LockContext.defaults()));
                LockManager holder = otherHolds ? different : usual;
                LockManager contender = otherHolds ? usual : different;
                String who = otherHolds ? other.name() + " holds, the usual configuration contends"
                        : "the usual configuration holds, " + other.name() + " contends";
                Lease held;
                try {
                    held = contract.hold(holder, k, contract.longLease("configured"));
                } catch (dev.latchkey.LockException refused) {
                    continue; // this configuration refuses to lock at all here: it cannot hold twice
                }
                raced++;
                try {
                    Optional<Lease> second = contract.tryTake(contender, k, contract.longLease("other-config"));
                    if (second.isPresent()) failures.add(who + ": both hold " + show(k));
                } catch (LockBackendException e) {
                    // refusing with an error that names the mismatch is allowed; it must say so
                    if (e.isRetriable()) failures.add(who + ": the contender's error is retriable: " + e.getMessage());
                } catch (dev.latchkey.LockException e) {
                    failures.add(who + ": unexpected " + e);
                }
                assertThat(held.isValid()).as("%s: the holder", who).isTrue();
            }
        }
        assertThat(failures).as("clients of one key configured differently").isEmpty();
        assertThat(raced).as("races in which one of the configurations could hold the key at all").isPositive();
    }

    void forceReleaseOfFreeKeyReturnsFalse() throws Exception {
        LockManager a = contract.newManager();
        String k = contract.key("force-nothing");
        assertThat(a.forceRelease(k)).as("never used").isFalse();
        contract.hold(a, k, contract.longLease("brief")).release();
        assertThat(a.forceRelease(k)).as("released").isFalse();
    }
}
