package dev.latchkey.spi;

import dev.latchkey.LockManager;
import java.util.Set;

/**
 * A backend. Found by {@link java.util.ServiceLoader}: ship a jar with
 * {@code META-INF/services/dev.latchkey.spi.LockProvider} naming your class, and prove it with the TCK.
 */
public interface LockProvider {

    /** URI schemes served, lower case, e.g. {@code postgres}, {@code postgresql}. */
    Set<String> schemes();

    /** One line for {@code latchkey backends}, e.g. "PostgreSQL advisory locks and lease table". */
    String description();

    /**
     * Opens a manager. Validates the URI first and fails with
     * {@link dev.latchkey.UnsupportedLockUriException} naming the bad part (never a secret).
     */
    LockManager open(LockUri uri, LockContext context);
}
