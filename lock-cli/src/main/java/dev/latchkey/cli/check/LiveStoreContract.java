package dev.latchkey.cli.check;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.engine.LeaseEngine;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * The compare-and-swap contract against the store under the deployment of the running check
 * ({@link LiveCheck}), when its backend is a {@link LeaseEngine}: each client is the store of a
 * freshly opened manager (own connections). Skipped, test by test with the reason, for backends
 * with their own locking primitive and under {@code --skip-cas}.
 */
public final class LiveStoreContract extends ConditionalStoreContract {
    private final LiveCheck.Settings settings = LiveCheck.current();

    @BeforeEach
    void requireConditionalStore() {
        Assumptions.assumeTrue(settings.casSkipReason() == null, settings.casSkipReason());
    }

    @Override
    protected ConditionalStore newStore() {
        return storeOf(Latchkey.open(settings.uri()));
    }

    /** The store under a freshly opened engine (closing the store closes the manager's connections). */
    static ConditionalStore storeOf(LockManager manager) {
        if (manager instanceof LeaseEngine engine) return engine.store();
        manager.close();
        throw new IllegalStateException(manager.description() + " is no longer a lease engine over a conditional store");
    }

    @Override
    protected int raceRounds() {
        return settings.casRounds();
    }
}
