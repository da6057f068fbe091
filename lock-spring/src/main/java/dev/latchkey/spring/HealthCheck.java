package dev.latchkey.spring;

import dev.latchkey.LockBackendException;
import dev.latchkey.LockException;
import dev.latchkey.LockManager;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One health check of a {@link LockManager}, in no Spring Boot line's types: UP when the store answers
 * a read. It is one {@link LockManager#inspect(String)} of {@link LatchkeyHealthIndicator#PROBE_KEY}, a
 * key nothing acquires: {@code inspect} is in every backend's core contract (unlike {@code list},
 * which needs {@code Capability.LIST}), takes no lock, writes nothing and reaches the store on every
 * backend. A backend error makes it DOWN with its message (which names the endpoint and never a
 * secret) and whether it is retriable. Boot 4's {@link LatchkeyHealthIndicator} and Boot 3's
 * {@link LatchkeyBoot3HealthIndicator} report it.
 */
record HealthCheck(boolean up, Map<String, Object> details) {
    static HealthCheck of(LockManager locks) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("backend", locks.description());
        long start = System.nanoTime();
        try {
            locks.inspect(LatchkeyHealthIndicator.PROBE_KEY);
            details.put("answeredInMillis", (System.nanoTime() - start) / 1_000_000);
            return new HealthCheck(true, details);
        } catch (LockException e) {
            details.put("error", e.getMessage());
            if (e instanceof LockBackendException backend) details.put("retriable", backend.isRetriable());
            return new HealthCheck(false, details);
        }
    }
}
