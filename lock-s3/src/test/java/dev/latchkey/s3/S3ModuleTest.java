package dev.latchkey.s3;

import dev.latchkey.tck.NamedModuleContract;

/** lock-s3's jar as a named module, on a module path of its runtime dependencies alone. */
class S3ModuleTest extends NamedModuleContract {
    @Override
    protected String moduleName() {
        return "dev.latchkey.s3";
    }

    @Override
    protected String providerClassName() {
        return "dev.latchkey.s3.S3LockProvider";
    }
}
