package dev.latchkey.azure;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import dev.latchkey.tck.ServerClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The lock contract through {@code azblob://…?mode=lease} (blob leases) against Azurite. Leases last
 * 15–60 s, so the timing tests use 15 s TTLs and long leases are capped at 60 s (the server-clock
 * tests' TTL, ten short TTLs, is capped so too); they spend those seconds waiting, so the tests run
 * concurrently (each has its own keys and managers).
 */
@Execution(ExecutionMode.CONCURRENT)
class AzureLeaseTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(Azurite.uri("lease"), context);
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(15);
    }

    @Override
    protected Duration maxTtl() {
        return Duration.ofSeconds(60);
    }

    /** An Azurite of its own under libfaketime, for the kit's server-clock tests only (the rest use the shared one). */
    @Override
    protected ServerClock serverClock() {
        return AzuriteClock.get().clock((uri, context) -> Latchkey.open(Azurite.withMode(uri, "lease"), context));
    }

    @Override
    protected String uriForOtherProcesses() {
        return Azurite.uri("lease");
    }

    /** The other mode on the same container and prefix: it must refuse, naming the mismatch. */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        return List.of(new OtherConfiguration() {
            @Override public String name() { return "mode=etag"; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(Azurite.uri("etag"), context); }
        });
    }
}
