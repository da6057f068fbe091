package dev.latchkey.azure;

import dev.latchkey.tck.NamedModuleContract;

/** lock-azure's jar as a named module, on a module path of its runtime dependencies alone. */
class AzureModuleTest extends NamedModuleContract {
    @Override
    protected String moduleName() {
        return "dev.latchkey.azure";
    }

    @Override
    protected String providerClassName() {
        return "dev.latchkey.azure.AzureLockProvider";
    }
}
