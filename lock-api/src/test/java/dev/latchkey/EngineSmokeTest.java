package dev.latchkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Quick checks of the engine on the two built-in stores; the full contract runs in lock-tck. */
class EngineSmokeTest {
    @TempDir Path dir;

    private String uri(String scheme) {
        return scheme.equals("mem") ? "mem://smoke-" + System.nanoTime() : "file://" + dir;
    }

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    void exclusiveTokensIncreaseAndForceReleaseIsSeen(String scheme) {
        String u = uri(scheme);
        try (LockManager a = Latchkey.open(u); LockManager b = Latchkey.open(u)) {
            Lease first = a.tryAcquire("job").orElseThrow();
            assertThat(b.tryAcquire("job")).isEmpty();
            assertThat(b.inspect("job")).get().extracting(LockInfo::leaseId).isEqualTo(first.leaseId());
            first.release();
            Lease second = b.tryAcquire("job").orElseThrow();
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            assertThat(a.forceRelease("job")).isTrue();
            assertThatThrownBy(second::renew).isInstanceOf(LeaseLostException.class);
            assertThatThrownBy(second::release).isInstanceOf(LeaseLostException.class);
            Lease third = a.acquire("job", Duration.ofSeconds(5));
            assertThat(third.fencingToken()).isGreaterThan(second.fencingToken());
            assertThat(a.list("jo")).extracting(LockInfo::key).containsExactly("job");
            third.close();
            assertThat(a.inspect("job")).isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    void timeoutNamesHolder(String scheme) {
        String u = uri(scheme);
        try (LockManager a = Latchkey.open(u); LockManager b = Latchkey.open(u)) {
            a.tryAcquire("k", LeaseOptions.defaults().withOwner("alice@host")).orElseThrow();
            assertThatThrownBy(() -> b.acquire("k", Duration.ofMillis(50)))
                    .isInstanceOf(LockTimeoutException.class).hasMessageContaining("alice@host");
        }
    }
}
