package dev.latchkey.micrometer;

import dev.latchkey.tck.NamedModuleContract;

/** lock-micrometer's jar as a named module, on a module path of its runtime dependencies alone. */
class MicrometerModuleTest extends NamedModuleContract {
    @Override
    protected String moduleName() {
        return "dev.latchkey.micrometer";
    }

    @Override
    protected String providerClassName() {
        return null;
    }
}
