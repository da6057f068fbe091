package dev.latchkey.engine;

import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.StoredRecord;
import dev.latchkey.spi.TimeSource;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * How one {@link ConditionalStoreLockManager} reads its records and spaces its writes, for the engine, its
 * leases ({@link ConditionalStoreLease}) and its withdrawals ({@link ClaimWithdrawal}).
 *
 * <p><b>Guarantee.</b> What {@link #decode} returns is a well-formed lease record of the key asked
 * for: anything else under the name (another program's object, a corrupt record, another key's
 * record) fails with a non-retriable {@link LockBackendException} saying which, and is never read as
 * ours. On a store with a
 * {@linkplain ConditionalStore#minWriteInterval() minimum write interval}, {@link #pace} spaces
 * the writes this manager sends to one record by at least that interval, whichever threads send
 * them; to stay small it forgets every slot once it tracks more than 4096 names, so a manager
 * writing that many records may send one write too soon (the store then refuses it, as it would
 * another client's). An interrupt while waiting for a slot throws {@link LockException}, the
 * interrupt flag kept.
 */
final class RecordStore {
    private final ConditionalStore store;
    private final TimeSource time;
    private final long minWriteNanos;
    /** Earliest time of this manager's next write to a name, for stores with a minimum write interval. */
    private final ConcurrentHashMap<String, Long> nextWriteSlot = new ConcurrentHashMap<>();

    RecordStore(ConditionalStore store, TimeSource time) {
        this.store = store;
        this.time = time;
        this.minWriteNanos = store.minWriteInterval().toNanos();
    }

    /** The store's minimum write interval in nanoseconds; 0 if it has none. */
    long minWriteNanos() {
        return minWriteNanos;
    }

    /** The record {@code stored} under {@code name}; {@code expectedKey} null: any key's. */
    LeaseRecord decode(StoredRecord stored, String name, String expectedKey) {
        LeaseRecord rec = LeaseRecord.decode(stored.data(), store.describe() + " " + name);
        if (expectedKey != null && !expectedKey.equals(rec.key())) {
            throw new LockBackendException("record " + name + " in " + store.describe() + " belongs to key '"
                    + rec.key() + "', not '" + expectedKey + "'", false);
        }
        return rec;
    }

    /** Waits for this manager's next write slot on {@code name} (stores with a minimum write interval). */
    void pace(String name) {
        if (minWriteNanos == 0) return;
        long now = time.nanoTime();
        if (nextWriteSlot.size() > ConditionalStoreLockManager.MAX_REMEMBERED) nextWriteSlot.clear();
        long slot = nextWriteSlot.merge(name, now + minWriteNanos, (last, mine) -> Math.max(mine, last + minWriteNanos))
                - minWriteNanos;
        sleep(slot - now, name);
    }

    void sleep(long nanos, String name) {
        if (nanos <= 0) return;
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException("interrupted while spacing writes to " + name + " in " + store.describe(), e);
        }
    }
}
