package dev.latchkey.bench;

import dev.latchkey.spi.LockUri;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Floor of {@code mem://}: claiming a key in a {@link ConcurrentHashMap} with {@code putIfAbsent}
 * and giving it back with {@code remove(key, value)} — the least any in-process lock table can do.
 * All sessions of one object share the table, so under contention a key another thread claimed
 * is found busy, as with the lock.
 */
public final class MemBaseline implements Baseline {
    private static final String LATENCY_KEY = "floor";
    private final ConcurrentMap<Object, Object> table = new ConcurrentHashMap<>();

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("mem");
    }

    @Override
    public Kind kind() {
        return Kind.FLOOR;
    }

    @Override
    public String description() {
        return "ConcurrentHashMap.putIfAbsent+remove";
    }

    @Override
    public boolean hasSpread(LockUri uri) {
        return true;
    }

    @Override
    public Session open(LockUri uri) {
        return new Session() {
            private Object token;

            @Override
            public void acquire() {
                token = new Object();
                if (table.putIfAbsent(LATENCY_KEY, token) != null) throw new IllegalStateException("floor key unexpectedly held");
            }

            @Override
            public void release() {
                if (!table.remove(LATENCY_KEY, token)) throw new IllegalStateException("floor key unexpectedly lost");
            }

            @Override
            public boolean tryRound(int key) {
                Object mine = new Object();
                if (table.putIfAbsent(key, mine) != null) return false;
                if (!table.remove(key, mine)) throw new IllegalStateException("floor key " + key + " unexpectedly lost");
                return true;
            }

            @Override
            public void close() {
                // a session holds nothing between rounds
            }
        };
    }
}
