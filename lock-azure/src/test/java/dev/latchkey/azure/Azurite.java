package dev.latchkey.azure;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;

/** The Azure server the tests share: {@code LATCHKEY_TEST_AZURE_URI}, else Azurite from {@code scripts/azurite.sh}. */
final class Azurite {
    private Azurite() {}

    static String uri() {
        return ExternalServer.uri("LATCHKEY_TEST_AZURE_URI", "azurite");
    }

    /** The shared server's URI with {@code mode=…} set. */
    static String uri(String mode) {
        return withMode(uri(), mode);
    }

    static String withMode(String uri, String mode) {
        return ExternalServer.withParam(uri, "mode", mode);
    }

    static ConditionalStore newStore() {
        return new AzureLockProvider().openStore(LockUri.parse(uri()));
    }
}
