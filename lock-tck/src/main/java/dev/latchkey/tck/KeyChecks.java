package dev.latchkey.tck;

import static dev.latchkey.tck.TckFixture.show;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Capability;
import dev.latchkey.InvalidLockKeyException;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The key tests of {@link LockManagerContract}: the hostile keys of {@link TckKeys} lock independently
 * and come back unchanged from every call; invalid keys are refused with
 * {@link dev.latchkey.InvalidLockKeyException} before any I/O; {@code list(prefix)} takes the prefix
 * literally (a {@code LIKE} pattern built from it would match too much). Per-key failures are
 * collected, so one run names every key that misbehaved.
 */
record KeyChecks(LockManagerContract contract) {

    void hostileKeysLockIndependentlyAndRoundTrip() throws Exception {
        LockManager a = contract.newManager();
        LockManager b = contract.newManager();
        List<String> keys = TckKeys.hostile(contract.fx.tag);
        assertThat(keys).as("hostile keys (the README quotes this number)").hasSize(57);
        List<String> failures = new ArrayList<>();
        Map<String, Lease> held = new LinkedHashMap<>();

        for (String k : keys) {
            check(failures, k, "tryAcquire", () -> {
                Optional<Lease> l = contract.tryTake(a, k, contract.longLease("hostile"));
                if (l.isEmpty()) return "free key refused (collides with another hostile key?)";
                held.put(k, l.get());
                return l.get().key().equals(k) ? null : "lease.key() is " + show(l.get().key());
            });
        }
        for (Map.Entry<String, Lease> e : held.entrySet()) {
            String k = e.getKey();
            check(failures, k, "second manager's tryAcquire", () ->
                    contract.tryTake(b, k, contract.longLease("x")).isPresent() ? "acquired a held key" : null);
            check(failures, k, "inspect", () -> {
                Optional<LockInfo> info = b.inspect(k);
                if (info.isEmpty()) return "held key shows no holder";
                if (!info.get().key().equals(k)) return "key came back as " + show(info.get().key());
                return info.get().leaseId().equals(e.getValue().leaseId()) ? null : "leaseId differs";
            });
        }
        for (Map.Entry<String, Lease> e : held.entrySet()) {
            check(failures, e.getKey(), "release", () -> {
                e.getValue().release();
                return b.inspect(e.getKey()).isPresent() ? "still held after release" : null;
            });
        }
        assertThat(failures).as("hostile keys that misbehaved (of %d)", keys.size()).isEmpty();
    }

    void invalidKeysAreRefusedBeforeAnyIo() throws Exception {
        LockManager a = contract.newManager();
        LeaseOptions o = contract.longLease("invalid");
        for (String k : TckKeys.invalid()) {
            String what = k == null ? "null" : show(k);
            assertThatThrownBy(() -> contract.track(a.tryAcquire(k)), "tryAcquire(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> contract.track(a.tryAcquire(k, o)), "tryAcquire(%s, options)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> contract.track(a.acquire(k, Duration.ofMillis(100))), "acquire(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> contract.track(a.acquire(k, Duration.ofMillis(100), o)), "acquire(%s, options)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> a.inspect(k), "inspect(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> a.forceRelease(k), "forceRelease(%s)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
            assertThatThrownBy(() -> a.forceRelease(k, "a-lease-id"), "forceRelease(%s, leaseId)", what)
                    .isInstanceOf(InvalidLockKeyException.class);
        }
    }

    void listByPrefix() throws Exception {
        LockManager a = contract.newManager();
        contract.requireCapability(a, Capability.LIST);
        LockManager b = contract.newManager();
        // '%' and '_' must be literal: a LIKE pattern built from the prefix would also match "ZZx/"
        String prefix = contract.key("list%_x/");
        Lease one = contract.hold(a, prefix + "one", contract.longLease("lister"));
        Lease two = contract.hold(b, prefix + "two", contract.longLease("lister"));
        contract.hold(a, contract.key("listZZx/") + "decoy", contract.longLease("decoy"));
        contract.hold(a, contract.key("lis"), contract.longLease("decoy"));
        contract.hold(a, prefix + "gone", contract.longLease("gone")).release();

        Map<String, String> listed = a.list(prefix).stream()
                .collect(Collectors.toMap(LockInfo::key, LockInfo::leaseId));
        assertThat(listed).as("list(%s)", prefix).containsExactlyInAnyOrderEntriesOf(Map.of(
                prefix + "one", one.leaseId(), prefix + "two", two.leaseId()));
        assertThat(b.list(contract.key(""))).extracting(LockInfo::key).as("list of the whole test tag")
                .containsExactlyInAnyOrder(prefix + "one", prefix + "two", contract.key("listZZx/") + "decoy", contract.key("lis"));
        one.release();
        assertThat(b.list(prefix)).extracting(LockInfo::key).containsExactly(prefix + "two");
    }

    private interface Check {
        String run() throws Exception;
    }

    /** Runs one per-key check, collecting a readable failure instead of stopping at the first. */
    private static void check(List<String> failures, String k, String step, Check check) {
        try {
            String problem = check.run();
            if (problem != null) failures.add(show(k) + " — " + step + ": " + problem);
        } catch (Exception | AssertionError e) {
            failures.add(show(k) + " — " + step + " threw " + e);
        }
    }
}
