package dev.latchkey.postgres.advisory;

import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.NetworkFaultContract;
import java.net.InetSocketAddress;

/**
 * The network fault contract on {@code mode=advisory}: a partitioned holder's pinned session stays
 * open on the server (the proxy's kernel keeps answering), so what frees the key is the session's
 * own server-side idle limit (TTL + TTL/5 after its last renewal), never earlier than the holder's
 * lease ends.
 */
class AdvisoryNetworkFaultTest extends NetworkFaultContract {
    @Override
    protected String serverUri() {
        return PgTestSupport.with(PgTestSupport.uri(), "timeout=1s");
    }

    @Override
    protected InetSocketAddress server() {
        LockUri u = LockUri.parse(PgTestSupport.uri());
        return new InetSocketAddress(u.host(), u.port().orElse(5432));
    }
}
