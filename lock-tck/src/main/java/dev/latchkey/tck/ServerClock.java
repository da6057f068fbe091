package dev.latchkey.tck;

import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import java.time.Duration;
import java.util.Objects;

/**
 * The clock of a backend's server, which the kit steps to hold a backend declaring
 * {@link dev.latchkey.Capability#SERVER_SIDE_EXPIRY} to its documented bound
 * ({@link LockManagerContract#serverClock()}): a server of the backend whose wall clock can be set
 * to real time plus an offset while it runs (PostgreSQL under libfaketime, for instance), and managers
 * on it. It may be a server of its own, started for these tests; nothing else in the kit uses it.
 * The kit's tests step one server clock at a time and set it back to {@link Duration#ZERO} after each.
 */
public interface ServerClock {
    /** A fresh, independent manager on the server whose clock {@link #step} moves (as {@code newManager(context)}). */
    LockManager open(LockContext context) throws Exception;

    /**
     * Sets the server's wall clock to real time plus {@code offset} (negative: behind), and returns
     * once the server reads it so: from then on, every expiry the server judges uses that clock.
     */
    void step(Duration offset) throws Exception;

    /**
     * For a backend declaring SERVER_SIDE_EXPIRY whose server's clock its tests cannot step: the
     * kit's server-clock tests are skipped, naming {@code why} — in the test report, not silently.
     */
    static ServerClock notSteppable(String why) {
        return new NotSteppable(Objects.requireNonNull(why, "why"));
    }

    /** What {@link #notSteppable} returns: the kit skips its tests with the reason. */
    record NotSteppable(String why) implements ServerClock {
        @Override
        public LockManager open(LockContext context) {
            throw new UnsupportedOperationException(why);
        }

        @Override
        public void step(Duration offset) {
            throw new UnsupportedOperationException(why);
        }
    }
}
