package dev.latchkey.tck;

import dev.latchkey.Capability;
import dev.latchkey.Lease;
import dev.latchkey.LeaseLostException;
import dev.latchkey.LeaseLostException.Reason;
import dev.latchkey.LockInfo;
import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A broken backend for {@link TckSelfTest}: the lease engine over a store whose record ages come
 * from one "server" clock that the kit can step ({@link #serverClock}), correct except that every
 * loss of a lease is reported as a force release ({@code BROKEN}, "it was force-released") — as
 * PostgreSQL's lease mode once read a row taken over after a clock step. Its holder learns of the
 * takeover in time, but is told the wrong story: the kit's server-clock test must catch it.
 */
final class ForceReleaseForEveryLoss {
    private ForceReleaseForEveryLoss() {}

    /** The wall clock of the "server": real time plus an offset that {@link ServerClock#step} sets. */
    static final class SteppedServerTime implements TimeSource {
        private volatile Duration offset = Duration.ZERO;

        @Override
        public Instant now() {
            return Instant.now().plus(offset);
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }
    }

    /** Managers on one store judged by {@code server}'s clock, declaring SERVER_SIDE_EXPIRY, with every loss misreported. */
    static LockManager open(Map<String, BrokenBackends.Rec> backing, SteppedServerTime server, LockContext context) {
        LockManager real = new ConditionalStoreLockManager(new BrokenBackends.WallClockAgeStore(backing, server), context,
                Set.of(Capability.SERVER_SIDE_EXPIRY, Capability.FENCING_TOKENS));
        return new ForwardingLockManager("every-loss-force-released", real) {
            @Override Lease wrap(Lease lease) { return new Misreported(lease); }
        };
    }

    /** The kit's hook on those managers: stepping moves {@code server}'s offset. */
    static ServerClock serverClock(Map<String, BrokenBackends.Rec> backing, SteppedServerTime server) {
        return new ServerClock() {
            @Override public LockManager open(LockContext context) { return ForceReleaseForEveryLoss.open(backing, server, context); }
            @Override public void step(Duration offset) { server.offset = offset; }
        };
    }

    private static LeaseLostException forceReleased(LeaseLostException real) {
        return new LeaseLostException(Reason.BROKEN, real.getMessage().replaceAll(": .*", ": it was force-released"));
    }

    private record Misreported(Lease d) implements Lease {
        @Override public String key() { return d.key(); }
        @Override public String leaseId() { return d.leaseId(); }
        @Override public String owner() { return d.owner(); }
        @Override public long fencingToken() { return d.fencingToken(); }
        @Override public Instant acquiredAt() { return d.acquiredAt(); }
        @Override public Instant expiresAt() { return d.expiresAt(); }
        @Override public Duration ttl() { return d.ttl(); }
        @Override public boolean isValid() { return d.isValid(); }
        @Override public void renew() { misreported(d::renew); }
        @Override public void release() { misreported(d::release); }
        @Override public void close() { misreported(d::close); }
        @Override public void onLost(Consumer<? super LeaseLostException> l) { d.onLost(e -> l.accept(forceReleased(e))); }
        @Override public LockInfo info() { return d.info(); }

        private static void misreported(Runnable call) {
            try {
                call.run();
            } catch (LeaseLostException e) {
                throw forceReleased(e);
            }
        }
    }
}
