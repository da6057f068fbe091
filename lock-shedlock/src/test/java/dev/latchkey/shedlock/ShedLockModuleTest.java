package dev.latchkey.shedlock;

import dev.latchkey.tck.NamedModuleContract;

/** lock-shedlock's jar as a named module, on a module path of its runtime dependencies alone. */
class ShedLockModuleTest extends NamedModuleContract {
    @Override
    protected String moduleName() {
        return "dev.latchkey.shedlock";
    }

    @Override
    protected String providerClassName() {
        return null;
    }
}
