package dev.latchkey.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.spi.LockUri;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link BenchRunAssertions} passes on a good {@code mem://} run and fails on each thing it checks. */
class BenchRunAssertionsTest {
    static final String MEM_FLOOR = "floor: ConcurrentHashMap.putIfAbsent+remove";
    static BenchRunAssertions run;

    @BeforeAll
    static void runOnce() throws Exception {
        run = BenchRunAssertions.run("mem://bench-assertions/some/prefix/");
    }

    @Test
    void passesOnAGoodRun() {
        List<String> asked = new ArrayList<>();
        run.measuresFloor(MEM_FLOOR)
                .doesNotPrint("not in the output")
                .leavesNoFloorObjects(prefix -> {
                    asked.add(prefix);
                    return List.of();
                });
        assertThat(asked).containsExactly("some/prefix/.latchkey-bench-floor");
    }

    @Test
    void failsWhenTheSecondRowIsNotTheFloor() {
        assertThatThrownBy(() -> run.measuresFloor("floor: something else")).isInstanceOf(AssertionError.class);
        assertThatThrownBy(() -> run.measuresFloor("peer: Semaphore(1)")).isInstanceOf(AssertionError.class);
    }

    @Test
    void failsWhenTheSecretIsPrinted() {
        assertThatThrownBy(() -> run.doesNotPrint("bench-assertions")).isInstanceOf(AssertionError.class);
    }

    @Test
    void failsWhenAFloorObjectIsLeft() {
        assertThatThrownBy(() -> run.leavesNoFloorObjects(prefix -> List.of(prefix + "-1234abcd")))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("the floor deletes its object on close");
    }

    @Test
    void floorPrefixIsBesideTheRecords() {
        assertThat(BenchRunAssertions.floorObjectPrefix(LockUri.parse("s3://bucket")))
                .isEqualTo(".latchkey-bench-floor");
        assertThat(BenchRunAssertions.floorObjectPrefix(LockUri.parse("s3://bucket//a/b//")))
                .isEqualTo("a/b/.latchkey-bench-floor");
    }
}
