package dev.latchkey.s3;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.LockManagerContract;
import java.time.Duration;

/** The lock contract through {@code s3://} against the real S3 server. */
class S3TckTest extends LockManagerContract {
    @Override
    protected LockManager newManager(LockContext context) {
        return Latchkey.open(S3Server.uri(), context);
    }

    /** Date and Last-Modified have one-second resolution, and the store lowers ages by a second. */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(3);
    }

    @Override
    protected String uriForOtherProcesses() {
        return S3Server.uri();
    }
}
