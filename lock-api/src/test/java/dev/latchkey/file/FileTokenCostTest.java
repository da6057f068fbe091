package dev.latchkey.file;

import static dev.latchkey.file.Machines.jvmOnBoot;
import static dev.latchkey.file.Machines.manager;
import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Lease;
import dev.latchkey.engine.ConditionalStoreLockManager;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What durable tokens cost on one boot: fsyncs per block of tokens, never per acquisition; and
 * tokens of a key strictly increase whichever store or JVM hands them out.
 */
class FileTokenCostTest {
    private static final int BLOCK = 16;
    private static final int N = 100;

    @TempDir
    Path dir;

    /** Acquires and releases {@code key} {@code n} times, taking turns between the managers; the tokens. */
    private static List<Long> takeTurns(String key, int n, ConditionalStoreLockManager... managers) {
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Lease l = managers[i % managers.length].tryAcquire(key).orElseThrow();
            tokens.add(l.fencingToken());
            l.release();
        }
        return tokens;
    }

    private static void assertStrictlyIncreasing(List<Long> tokens) {
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d of %s", i, tokens).isGreaterThan(tokens.get(i - 1));
        }
    }

    @Test
    void twoStoresOfOneJvmCostOneFsyncPerBlock() throws IOException {
        Host jvm = jvmOnBoot("boot-1", BLOCK);
        List<Long> tokens;
        try (ConditionalStoreLockManager a = manager(jvm, dir); ConditionalStoreLockManager b = manager(jvm, dir)) {
            tokens = takeTurns("job", N, a, b);
        }
        assertStrictlyIncreasing(tokens);
        // creating .tokens syncs the file and the directory; each further block is one fdatasync
        assertThat(jvm.syncs()).isEqualTo((N + BLOCK - 1) / BLOCK + 1);
        assertThat(Machines.tokenFile(dir).high()).isGreaterThanOrEqualTo(tokens.get(N - 1));
    }

    @Test
    void twoJvmsShareTheBlocks() throws IOException {
        Host first = jvmOnBoot("boot-1", BLOCK);
        Host second = jvmOnBoot("boot-1", BLOCK);
        List<Long> tokens;
        try (ConditionalStoreLockManager a = manager(first, dir); ConditionalStoreLockManager b = manager(second, dir)) {
            tokens = takeTurns("job", N, a, b);
        }
        assertStrictlyIncreasing(tokens);
        assertThat(tokens.get(N - 1)).isEqualTo(N); // the same boot: no jump
        // one fsync per block, plus for each JVM its first use and at most one block of lead
        assertThat(first.syncs() + second.syncs()).isLessThanOrEqualTo((N + BLOCK - 1) / BLOCK + 2 * 2);
        assertThat(Machines.tokenFile(dir).high()).isGreaterThanOrEqualTo(tokens.get(N - 1));
    }

    @Test
    void manyKeysShareOneReservation() {
        Host jvm = jvmOnBoot("boot-1", BLOCK);
        try (ConditionalStoreLockManager m = manager(jvm, dir)) {
            for (int k = 0; k < 50; k++) takeTurns("key-" + k, 3, m);
        }
        // the highest token of any key is 3: one block, reserved when .tokens was created
        assertThat(jvm.syncs()).isEqualTo(2);
    }
}
