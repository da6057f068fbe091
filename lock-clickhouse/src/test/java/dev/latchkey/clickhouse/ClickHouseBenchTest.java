package dev.latchkey.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.bench.Baseline;
import dev.latchkey.bench.BenchRunAssertions;
import dev.latchkey.spi.LockUri;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code latchkey bench} against the real server: the {@code SELECT 1} floor is found for the
 * scheme and measured beside the backend in the same run. Counts and labels only: nothing here
 * asserts a timing.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClickHouseBenchTest {
    private final String table = "bench_" + UUID.randomUUID().toString().substring(0, 8);

    @Test
    void floorIsInstalledForEverySchemeOfTheProvider() {
        for (String scheme : new ClickHouseLockProvider().schemes()) {
            List<Baseline> baselines = Baseline.forScheme(scheme);
            assertThat(baselines).hasAtLeastOneElementOfType(ClickHouseBaseline.class);
            Baseline floor = baselines.stream().filter(b -> b instanceof ClickHouseBaseline).findFirst().orElseThrow();
            assertThat(floor.kind()).isEqualTo(Baseline.Kind.FLOOR);
            assertThat(floor.hasHandoff()).isFalse();
        }
        assertThat(Baseline.forScheme("postgres")).noneMatch(b -> b instanceof ClickHouseBaseline);
    }

    @Test
    void floorSessionIsOneSelectAndReleasesNothing() throws Exception {
        Baseline floor = new ClickHouseBaseline();
        try (Baseline.Session session = floor.open(LockUri.parse(ClickHouseTestServer.uri("table=" + table)))) {
            for (int i = 0; i < 3; i++) {
                session.acquire();
                session.release();
            }
        }
        // the floor touches no table: the lock table of that URI was never created
        assertThat(ClickHouseTestServer.sql("EXISTS TABLE `" + ClickHouseTestServer.database() + "`.`" + table + "`"))
                .isEqualTo("0");
    }

    @Test
    void benchPrintsTheFloorBesideTheBackend() throws Exception {
        BenchRunAssertions.run(ClickHouseTestServer.uri("table=" + table + "&settle=20ms"))
                .measuresFloor("floor: SELECT 1 round trip");
    }
}
