/**
 * The {@code azblob://} backend: {@code AzureLocks} for an application's own
 * {@code BlobContainerClient}; the URI route through {@code Latchkey.open("azblob://…")}.
 * Everything else stays inside the package.
 */
module dev.latchkey.azure {
    requires transitive dev.latchkey.api;
    requires transitive com.azure.storage.blob;
    requires com.azure.core;
    requires com.azure.storage.common;

    exports dev.latchkey.azure;

    provides dev.latchkey.spi.LockProvider with dev.latchkey.azure.AzureLockProvider;
}
