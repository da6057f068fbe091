package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.util.ArrayList;
import java.util.List;

/**
 * The fencing test of {@link LockManagerContract}, for backends that declare
 * {@link Capability#FENCING_TOKENS}: the tokens of successive holders of one key are positive and
 * strictly increasing across a release (to another manager and to the same one), a force release and
 * a takeover of an abandoned lease, and every other manager's {@code inspect} shows the holder's own.
 */
record FencingChecks(LockManagerContract contract) {
    void fencingTokensIncreaseAcrossReleaseTakeoverAndForceRelease() throws Exception {
        LockManager a = contract.newManager();
        LockManagerContract.requireCapability(a, Capability.FENCING_TOKENS);
        LockManager b = contract.newManager();
        LockManager c = contract.newManager();
        String k = contract.key("fencing");
        List<Long> tokens = new ArrayList<>();

        Lease l = contract.hold(a, k, contract.longLease("1"));                      // first ever
        tokens.add(checkedToken(b, l));
        l.release();
        l = contract.hold(b, k, contract.longLease("2"));                             // after release, other manager
        tokens.add(checkedToken(a, l));
        l.release();
        l = contract.hold(b, k, contract.longLease("3"));                             // after release, same manager
        tokens.add(checkedToken(a, l));
        assertThat(c.forceRelease(k)).isTrue();
        l = contract.hold(a, k, contract.abandoned("4"));                             // after force release
        tokens.add(checkedToken(c, l));
        l = contract.pollUntilAcquired(c, k, contract.longLease("5"), contract.takeoverLimit()); // after takeover
        tokens.add(checkedToken(a, l));
        l.release();
        l = contract.hold(a, k, contract.longLease("6"));
        tokens.add(checkedToken(b, l));

        assertThat(tokens).as("fencing tokens of successive holders").allMatch(t -> t > 0);
        assertThat(tokens).as("fencing tokens of successive holders").isSorted().doesNotHaveDuplicates();
    }

    /** The lease's token, after checking that {@code other} sees the same one through inspect. */
    private static long checkedToken(LockManager other, Lease lease) {
        assertThat(other.inspect(lease.key()).map(LockInfo::fencingToken))
                .as("inspect's token for %s", lease.owner()).contains(lease.fencingToken());
        return lease.fencingToken();
    }
}
