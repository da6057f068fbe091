package dev.latchkey.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's own test kit ({@code shedlock-test-support}'s {@link AbstractExtensibleLockProviderIntegrationTest},
 * which includes {@code AbstractLockProviderIntegrationTest} and its fuzz test) against
 * {@link LatchkeyLockProvider} on one backend. Every test of the kit runs, one with another
 * argument (below). "Locked" and "unlocked" are asked of the store as another node would: a second
 * manager on the same URI tries to take the key (and gives it back at once if it got it).
 */
abstract class ShedLockKit extends AbstractExtensibleLockProviderIntegrationTest {
    private LockManager locks;
    private LockManager otherNode;
    private LatchkeyLockProvider provider;

    /** The backend's URI: every call names the same store. */
    protected abstract String uri();

    @BeforeEach
    void open() {
        locks = Latchkey.open(uri());
        otherNode = Latchkey.open(uri());
        provider = new LatchkeyLockProvider(locks);
    }

    @AfterEach
    void close() {
        if (locks != null) locks.close();
        if (otherNode != null) otherNode.close();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertLocked(String lockName) {
        Optional<Lease> taken = otherNode.tryAcquire(lockName, LeaseOptions.ttl(Duration.ofSeconds(5)));
        taken.ifPresent(Lease::release);
        assertThat(taken).as("another node's tryAcquire of locked '%s'", lockName).isEmpty();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        Optional<Lease> taken = otherNode.tryAcquire(lockName, LeaseOptions.ttl(Duration.ofSeconds(5)));
        taken.ifPresent(Lease::release);
        assertThat(taken).as("another node's tryAcquire of unlocked '%s'", lockName).isPresent();
    }

    /**
     * The kit's 50 ms {@code lockAtMostFor}, then "unlocked" asked after 100 ms, would test the store's
     * expiry to the millisecond: Latchkey's shortest TTL is 100 ms ({@link LeaseOptions#MIN_TTL}), so
     * the key is held exactly as long as the kit waits, and on PostgreSQL's advisory mode and
     * {@code file://} the holder's timer frees it a few milliseconds after. Same test, 500 ms.
     */
    @Test
    @Override
    public void shouldTimeout() throws InterruptedException {
        doTestTimeout(Duration.ofMillis(500));
    }
}
