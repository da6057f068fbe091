package dev.latchkey.engine;

import static dev.latchkey.engine.ConditionalStoreLockManager.LOG;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LeaseRuntime;
import dev.latchkey.spi.StoredRecord;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What one {@link ConditionalStoreLockManager} does about a claim (a conditional create or replace of a record
 * with a new lease of ours) whose outcome is unknown: it timed out, lost its reply, or the read
 * that should have told failed.
 *
 * <p><b>Guarantee.</b> No such claim leaves a phantom holder behind for a TTL. Read back at once,
 * a claim that landed is the caller's lease ({@link #resolveFailedClaim}); one that may still land
 * — the store still shows the state it was conditional on, or could not be read — is withdrawn in
 * the background ({@link #withdrawLater}): the record is released if it shows that very claim,
 * by a write conditional on the version just read, so nothing but our own claim is ever
 * released. It looks 100 ms after the failure, then again after twice as long each time a look
 * settles nothing (it failed, the claim may still land, or the release was not applied), and stops
 * once it has released the claim, once the record has moved on (the claim can then never land),
 * or when 30 s have passed since the claim was sent (longer than the stores' server-side request
 * timeouts).
 */
final class ClaimWithdrawal {
    /** How long after a failed claim a write of it could still land (server-side request timeouts). */
    private static final long WITHDRAW_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(30);
    static final long FIRST_WITHDRAW_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ConditionalStore store;
    private final RecordStore records;
    private final LeaseRuntime runtime;

    ClaimWithdrawal(ConditionalStore store, RecordStore records, LeaseRuntime runtime) {
        this.store = store;
        this.records = records;
        this.runtime = runtime;
    }

    /**
     * After a claim failed with an unknown outcome: the version it wrote if it landed (the caller
     * then holds the key); else empty, and if the claim could still land it is withdrawn later.
     */
    Optional<String> resolveFailedClaim(String name, String key, String expected, LeaseRecord mine,
                                        long sent, RuntimeException failure) {
        Optional<StoredRecord> after;
        try {
            after = store.read(name);
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
            withdrawLater(name, key, expected, mine, sent, FIRST_WITHDRAW_NANOS);
            return Optional.empty();
        }
        if (after.isPresent() && mine.sameLease(records.decode(after.get(), name, key))) return Optional.of(after.get().version());
        if (mayStillLand(expected, after)) withdrawLater(name, key, expected, mine, sent, FIRST_WITHDRAW_NANOS);
        return Optional.empty();
    }

    /** A claim conditional on {@code expected} (null: on absence) can still land while the store shows that state. */
    static boolean mayStillLand(String expected, Optional<StoredRecord> current) {
        return expected == null ? current.isEmpty() : current.map(r -> r.version().equals(expected)).orElse(false);
    }

    /**
     * Releases {@code mine} if a claim of it turns out to have landed after all; gives up once it
     * provably cannot land (the record moved on) or the window for late requests has passed.
     */
    void withdrawLater(String name, String key, String expected, LeaseRecord mine, long sent, long delayNanos) {
        runtime.later(Duration.ofNanos(delayNanos), () -> {
            try {
                Optional<StoredRecord> cur = store.read(name);
                if (cur.isPresent() && mine.sameLease(records.decode(cur.get(), name, key))) {
                    records.pace(name);
                    if (store.replace(name, cur.get().version(), mine.released(true).encode()).isPresent()) return;
                } else if (!mayStillLand(expected, cur)) {
                    return; // the record moved on: our claim, conditional on what was there, can never land
                }
            } catch (RuntimeException e) {
                LOG.log(Level.DEBUG, "withdrawing an unconfirmed claim of '" + key + "' failed; retrying", e);
            }
            if (runtime.time().nanoTime() - sent < WITHDRAW_WINDOW_NANOS) {
                withdrawLater(name, key, expected, mine, sent, delayNanos * 2);
            }
        });
    }
}
