package dev.latchkey.cli.check;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.StoreFaultContract;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * The fault contract against the store under the deployment of the running check
 * ({@link LiveCheck}): the lease engine over the live store, with lost replies, refused writes,
 * slow claims and the rest injected between it and the store. Runs where the CAS contract runs
 * (a backend that exposes its conditional store, no {@code --skip-cas}); its TTL is the larger of the check's
 * {@code --ttl} and the contract's own minimum for the store.
 */
public final class LiveStoreFaultContract extends StoreFaultContract {
    private final LiveCheck.Settings settings = LiveCheck.current();

    @BeforeEach
    void requireConditionalStore() {
        Assumptions.assumeTrue(settings.casSkipReason() == null, settings.casSkipReason());
    }

    @Override
    protected ConditionalStore newStore() {
        return LiveStoreContract.openStore(settings);
    }

    @Override
    protected Duration shortTtl() throws Exception {
        Duration own = super.shortTtl();
        return settings.ttl().compareTo(own) > 0 ? settings.ttl() : own;
    }
}
