package dev.latchkey.tck;

import dev.latchkey.LockBackendException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.HolderLiveness;
import dev.latchkey.spi.StoredRecord;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ConditionalStore} that puts the faults of real networks and real stores between a lock
 * and its store: the {@link StoreFaultContract} runs every backend's own store through it, and a
 * backend author can use it in tests of their own.
 *
 * <p><b>What it does.</b> With nothing armed it forwards every call unchanged, including the
 * optional parts of the SPI ({@link #nextToken}, {@link #minWriteInterval}, {@link #holderLiveness},
 * {@link #awaitChange}), so a lock over it behaves exactly as over the wrapped store. Each armed
 * {@link Fault} applies to the next call of its {@link Op} made through <em>this</em> wrapper (give
 * the holder and its contender separate wrappers), in the order armed:
 * <ul>
 *   <li>{@link Fault#LOSE_REPLY}: the write lands, then the call throws — a timeout or a reset
 *       connection after the request arrived;</li>
 *   <li>{@link Fault#FAIL_BEFORE}: the call throws and the store is not touched — the request never
 *       arrived;</li>
 *   <li>{@link Fault#REFUSE}: the store answers "not written" without applying anything — AWS S3's
 *       409 for a conflicting request in flight, GCS's 429 rate limit;</li>
 *   <li>{@link Fault#RETRIED_AFTER_LANDING}: the write lands and the call answers "not written" — an
 *       SDK retry whose first attempt landed and whose second found the condition failed (412).</li>
 * </ul>
 * {@link #slow} delays the next call before it reaches the store, after, or both (a write that
 * lands late; a reply that arrives after the lease's margin). {@link #chaos} injects the four faults
 * at random into writes, and {@link Fault#FAIL_BEFORE} into reads, for stress tests.
 *
 * <p>Thread-safe: what is armed is taken under a lock that is never held across a delay or a call
 * of the wrapped store. Counts every call per {@link Op}, so tests can also prove that something did
 * <em>no</em> I/O.
 */
public final class FaultInjectingStore implements ConditionalStore {

    /** The store operations a fault can be armed on. */
    public enum Op { READ, CREATE, REPLACE, DELETE }

    /** What goes wrong with one call. */
    public enum Fault { LOSE_REPLY, FAIL_BEFORE, REFUSE, RETRIED_AFTER_LANDING }

    private record Delay(Duration before, Duration after) {}

    private final ConditionalStore store;
    /** Guards what is armed: {@link #armed}, {@link #delays}, {@link #chaos}, {@link #chaosRate}. */
    private final ReentrantLock faults = new ReentrantLock();
    private final Map<Op, Deque<Fault>> armed = new EnumMap<>(Op.class);
    private final Map<Op, Deque<Delay>> delays = new EnumMap<>(Op.class);
    private final Map<Op, AtomicLong> calls = new EnumMap<>(Op.class);
    private final Map<Op, AtomicLong> injected = new EnumMap<>(Op.class);
    private Random chaos;
    private double chaosRate;

    public FaultInjectingStore(ConditionalStore store) {
        this.store = Objects.requireNonNull(store, "store");
        for (Op op : Op.values()) {
            armed.put(op, new ArrayDeque<>());
            delays.put(op, new ArrayDeque<>());
            calls.put(op, new AtomicLong());
            injected.put(op, new AtomicLong());
        }
    }

    /** The next call of {@code op} suffers {@code fault} (after those armed before). */
    public FaultInjectingStore arm(Op op, Fault fault) {
        return arm(op, fault, 1);
    }

    /** The next {@code times} calls of {@code op} suffer {@code fault}. */
    public FaultInjectingStore arm(Op op, Fault fault, int times) {
        faults.lock();
        try {
            for (int i = 0; i < times; i++) armed.get(op).add(fault);
        } finally {
            faults.unlock();
        }
        return this;
    }

    /**
     * The next call of {@code op} waits {@code beforeLanding} before it reaches the store and
     * {@code afterLanding} before its answer is returned.
     */
    public FaultInjectingStore slow(Op op, Duration beforeLanding, Duration afterLanding) {
        faults.lock();
        try {
            delays.get(op).add(new Delay(beforeLanding, afterLanding));
        } finally {
            faults.unlock();
        }
        return this;
    }

    /**
     * From now on each write suffers one of the four faults, chosen at random, with probability
     * {@code rate}, and each read fails before it arrives with probability {@code rate / 2};
     * {@code rate = 0} stops it. The seed makes a failing run repeatable.
     */
    public FaultInjectingStore chaos(double rate, long seed) {
        faults.lock();
        try {
            this.chaosRate = rate;
            this.chaos = rate > 0 ? new Random(seed) : null;
        } finally {
            faults.unlock();
        }
        return this;
    }

    /** Drops every armed fault, delay and chaos: a transparent wrapper again. */
    public FaultInjectingStore heal() {
        faults.lock();
        try {
            armed.values().forEach(Deque::clear);
            delays.values().forEach(Deque::clear);
            chaos = null;
        } finally {
            faults.unlock();
        }
        return this;
    }

    /** Calls of {@code op} made through this wrapper so far. */
    public long calls(Op op) {
        return calls.get(op).get();
    }

    /** Faults injected into calls of {@code op} so far. */
    public long injected(Op op) {
        return injected.get(op).get();
    }

    /** The wrapped store. */
    public ConditionalStore unwrapped() {
        return store;
    }

    @Override
    public Optional<StoredRecord> read(String name) {
        return call(Op.READ, () -> store.read(name), Optional.empty());
    }

    @Override
    public Optional<String> create(String name, byte[] data) {
        return call(Op.CREATE, () -> store.create(name, data), Optional.empty());
    }

    @Override
    public Optional<String> replace(String name, String expectedVersion, byte[] data) {
        return call(Op.REPLACE, () -> store.replace(name, expectedVersion, data), Optional.empty());
    }

    @Override
    public boolean delete(String name, String expectedVersion) {
        return call(Op.DELETE, () -> store.delete(name, expectedVersion), false);
    }

    @Override
    public List<String> list(String namePrefix) {
        return store.list(namePrefix);
    }

    @Override
    public void awaitChange(String name, String version, Duration max) throws InterruptedException {
        store.awaitChange(name, version, max);
    }

    @Override
    public long nextToken(long previous) {
        return store.nextToken(previous);
    }

    @Override
    public Duration minWriteInterval() {
        return store.minWriteInterval();
    }

    @Override
    public Optional<HolderLiveness> holderLiveness() {
        return store.holderLiveness();
    }

    @Override
    public String describe() {
        return "faulty " + store.describe();
    }

    @Override
    public void close() {
        store.close();
    }

    @Override
    public String toString() {
        return describe();
    }

    private interface Call<T> {
        T run();
    }

    private <T> T call(Op op, Call<T> real, T notWritten) {
        calls.get(op).incrementAndGet();
        Fault fault;
        Delay delay;
        faults.lock();
        try {
            fault = armed.get(op).poll();
            if (fault == null && chaos != null) fault = randomFault(op);
            delay = delays.get(op).poll();
        } finally {
            faults.unlock();
        }
        if (fault != null) injected.get(op).incrementAndGet();
        if (delay != null) pause(delay.before());
        if (fault == Fault.FAIL_BEFORE) throw failure(op, "the request never reached the store");
        if (fault == Fault.REFUSE && op != Op.READ) {
            if (delay != null) pause(delay.after());
            return notWritten;
        }
        T answer = real.run();
        if (delay != null) pause(delay.after());
        if (fault == Fault.LOSE_REPLY) throw failure(op, "the reply was lost after the request reached the store");
        if (fault == Fault.RETRIED_AFTER_LANDING && op != Op.READ) return notWritten;
        return answer;
    }

    /** Under {@link #faults}: a random fault for this call, or null. */
    private Fault randomFault(Op op) {
        if (op == Op.READ) return chaos.nextDouble() < chaosRate / 2 ? Fault.FAIL_BEFORE : null;
        if (chaos.nextDouble() >= chaosRate) return null;
        return Fault.values()[chaos.nextInt(Fault.values().length)];
    }

    private LockBackendException failure(Op op, String what) {
        return new LockBackendException("injected fault on " + op + " at " + store.describe() + ": " + what, true);
    }

    private static void pause(Duration d) {
        if (d.isZero() || d.isNegative()) return;
        try {
            TimeUnit.NANOSECONDS.sleep(d.toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted in an injected delay", true, e);
        }
    }
}
