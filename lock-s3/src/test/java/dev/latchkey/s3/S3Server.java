package dev.latchkey.s3;

import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;

/** The S3 server the tests share: {@code LATCHKEY_TEST_S3_URI}, else S3Proxy over Azurite from {@code scripts/s3.sh}. */
final class S3Server {
    private S3Server() {}

    static String uri() {
        return ExternalServer.uri("LATCHKEY_TEST_S3_URI", "s3");
    }

    /** A fresh store client (own HTTP client), as a separate process would have. */
    static S3ConditionalStore newStore(String uri) {
        return new S3LockProvider().openStore(LockUri.parse(uri));
    }
}
