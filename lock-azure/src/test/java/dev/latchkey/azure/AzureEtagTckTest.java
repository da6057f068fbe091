package dev.latchkey.azure;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;
import java.util.List;

/** The lock contract through {@code azblob://…?mode=etag} against Azurite. */
class AzureEtagTckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(Azurite.uri("etag"), context);
    }

    /** Date and Last-Modified have one-second resolution, and ages are lowered by a second. */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    @Override
    protected String uriForOtherProcesses() {
        return Azurite.uri("etag");
    }

    /** The other mode on the same container and prefix: it must refuse, naming the mismatch. */
    @Override
    protected List<OtherConfiguration> otherConfigurations() {
        return List.of(new OtherConfiguration() {
            @Override public String name() { return "mode=lease"; }
            @Override public LockManager open(LockContext context) { return Latchkey.open(Azurite.uri("lease"), context); }
        });
    }
}
