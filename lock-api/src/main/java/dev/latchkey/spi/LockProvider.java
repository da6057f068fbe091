package dev.latchkey.spi;

import dev.latchkey.LockManager;
import dev.latchkey.engine.ConditionalStoreLockManager;
import java.util.Optional;
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

    /**
     * The compare-and-swap store under the managers {@link #open} returns for {@code uri}, for
     * callers that race it directly (the TCK's CAS contract, {@code latchkey check}); closing it
     * closes what it opened. Empty for a backend that locks with its own primitive. A backend that
     * declares {@link dev.latchkey.Capability#CONDITIONAL_STORE} answers its store here.
     *
     * <p>The default opens a manager and answers the store of a {@link ConditionalStoreLockManager}; a provider
     * whose manager wraps the engine (or builds on a store another way) overrides this.
     */
    default Optional<ConditionalStore> openStore(LockUri uri, LockContext context) {
        LockManager manager = open(uri, context);
        if (manager instanceof ConditionalStoreLockManager engine) return Optional.of(engine.store());
        manager.close();
        return Optional.empty();
    }
}
