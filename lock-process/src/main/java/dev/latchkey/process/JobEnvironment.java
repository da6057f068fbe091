package dev.latchkey.process;

import dev.latchkey.Lease;
import java.util.List;
import java.util.Map;

/**
 * What {@code latchkey run} tells CMD of its lease, through environment variables.
 *
 * <p><b>Guarantee.</b> Under a lease, CMD sees all five variables, each describing that lease and
 * no other (values inherited from an enclosing {@code latchkey run} are replaced); without one
 * ({@code --bypass-lock}) it sees none of them, so a job never presents an enclosing run's token as
 * its own. None holds a secret: the backend is the manager's masked description.
 */
final class JobEnvironment {
    static final String KEY = "LATCHKEY_KEY";
    static final String LEASE_ID = "LATCHKEY_LEASE_ID";
    /** The fencing token; 0 where the backend declares no FENCING_TOKENS capability. */
    static final String TOKEN = "LATCHKEY_TOKEN";
    static final String OWNER = "LATCHKEY_OWNER";
    /** {@link dev.latchkey.LockManager#description()}: the URI with every secret masked. */
    static final String BACKEND = "LATCHKEY_BACKEND";

    private static final List<String> NAMES = List.of(KEY, LEASE_ID, TOKEN, OWNER, BACKEND);

    private JobEnvironment() {}

    /** Sets the variables of {@code lease}, held on the backend described as {@code backend}. */
    static void describe(Lease lease, String backend, Map<String, String> env) {
        env.put(KEY, lease.key());
        env.put(LEASE_ID, lease.leaseId());
        env.put(TOKEN, Long.toString(lease.fencingToken()));
        env.put(OWNER, lease.owner());
        env.put(BACKEND, backend);
    }

    /** Removes every variable, for a CMD run without a lease. */
    static void clear(Map<String, String> env) {
        NAMES.forEach(env::remove);
    }
}
