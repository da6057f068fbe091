package dev.latchkey.cli.check;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.tck.ConditionalStoreContract;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * The compare-and-swap contract against the store under the deployment of the running check
 * ({@link LiveCheck}), for a backend that declares {@code CONDITIONAL_STORE} and exposes its store
 * ({@link LockProvider#openStore}): each client is a freshly opened store (own connections).
 * Skipped, test by test with the reason, for backends with their own locking primitive and under
 * {@code --skip-cas}.
 */
public final class LiveStoreContract extends ConditionalStoreContract {
    private final LiveCheck.Settings settings = LiveCheck.current();

    @BeforeEach
    void requireConditionalStore() {
        Assumptions.assumeTrue(settings.casSkipReason() == null, settings.casSkipReason());
    }

    @Override
    protected ConditionalStore newStore() {
        return openStore(settings);
    }

    /** A freshly opened store of the check's URI (the check ran it only after its provider exposed one). */
    static ConditionalStore openStore(LiveCheck.Settings settings) {
        return settings.backends().openStore(settings.uri()).orElseThrow(() -> new IllegalStateException(
                "the backend of the check no longer exposes its conditional store"));
    }

    @Override
    protected int raceRounds() {
        return settings.casRounds();
    }
}
