package dev.latchkey.bench;

import dev.latchkey.spi.LockUri;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Floor of {@code mem://}: claiming a key in a {@link ConcurrentHashMap} with {@code putIfAbsent}
 * and giving it back with {@code remove(key, value)} — the least any in-process lock table can do.
 */
public final class MemFloor implements Baseline {

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
    public Session open(LockUri uri) {
        ConcurrentMap<String, Object> table = new ConcurrentHashMap<>();
        String key = "floor";
        return new Session() {
            private Object token;

            @Override
            public void acquire() {
                token = new Object();
                if (table.putIfAbsent(key, token) != null) throw new IllegalStateException("floor key unexpectedly held");
            }

            @Override
            public void release() {
                if (!table.remove(key, token)) throw new IllegalStateException("floor key unexpectedly lost");
            }

            @Override
            public void close() {
                table.clear();
            }
        };
    }
}
