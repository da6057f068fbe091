package dev.latchkey.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The test servers' route: the property wins over the environment, {@code scripts} by default, nothing else accepted. */
class ServerRouteTest {
    @Test
    void scriptsUnlessContainersIsAskedFor() {
        assertThat(ExternalServer.containersRoute(null, null)).isFalse();
        assertThat(ExternalServer.containersRoute(" ", "")).isFalse();
        assertThat(ExternalServer.containersRoute("scripts", null)).isFalse();
        assertThat(ExternalServer.containersRoute(null, "containers")).isTrue();
        assertThat(ExternalServer.containersRoute("containers", null)).isTrue();
    }

    @Test
    void thePropertyWinsOverTheEnvironment() {
        assertThat(ExternalServer.containersRoute("scripts", "containers")).isFalse();
        assertThat(ExternalServer.containersRoute("containers", "scripts")).isTrue();
    }

    @Test
    void anyOtherValueIsRefusedNotTakenForScripts() {
        assertThatThrownBy(() -> ExternalServer.containersRoute("docker", null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("scripts and containers");
        assertThatThrownBy(() -> ExternalServer.containersRoute(null, "container"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("scripts and containers");
    }
}
