package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OwnersTest {
    /** The host read without a lookup is the one the name service answered for before (where it answers). */
    @Test
    void hostIsTheNameTheNameServiceGives() throws UnknownHostException {
        assertThat(Owners.hostName()).isEqualTo(InetAddress.getLocalHost().getHostName());
    }

    @Test
    void ownerIsUserAtHostSlashPid() {
        assertThat(Owners.defaultOwner()).isEqualTo(System.getProperty("user.name") + "@" + Owners.hostName()
                + "/" + ProcessHandle.current().pid());
        assertThat(LeaseOptions.ttl(Duration.ofSeconds(5)).owner()).isEqualTo(Owners.defaultOwner());
    }
}
