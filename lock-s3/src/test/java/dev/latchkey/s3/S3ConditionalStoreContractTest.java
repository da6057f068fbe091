package dev.latchkey.s3;

import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.tck.ConditionalStoreContract;

/** The CAS contract (200 rounds of 8 racing creates and replaces) against the real S3 server. */
class S3ConditionalStoreContractTest extends ConditionalStoreContract {
    @Override
    protected ConditionalStore newStore() {
        return S3Server.newStore(S3Server.uri());
    }
}
