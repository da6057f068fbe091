package dev.latchkey.postgres.lease;

import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.NetworkFaultContract;
import java.net.InetSocketAddress;

/** The network fault contract on {@code mode=lease}, with a short statement timeout so faults show quickly. */
class LeaseModeNetworkFaultTest extends NetworkFaultContract {
    @Override
    protected String serverUri() {
        return PgTestSupport.with(PgTestSupport.uri(), PgTestSupport.LEASE + "&timeout=1s");
    }

    @Override
    protected InetSocketAddress server() {
        LockUri u = LockUri.parse(PgTestSupport.uri());
        return new InetSocketAddress(u.host(), u.port().orElse(5432));
    }
}
