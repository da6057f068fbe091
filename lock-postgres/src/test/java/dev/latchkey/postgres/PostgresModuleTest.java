package dev.latchkey.postgres;

import dev.latchkey.tck.NamedModuleContract;

/** lock-postgres's jar as a named module, on a module path of its runtime dependencies alone. */
class PostgresModuleTest extends NamedModuleContract {
    @Override
    protected String moduleName() {
        return "dev.latchkey.postgres";
    }

    @Override
    protected String providerClassName() {
        return "dev.latchkey.postgres.PostgresLockProvider";
    }
}
