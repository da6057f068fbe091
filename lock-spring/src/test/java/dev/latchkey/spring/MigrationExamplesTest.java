package dev.latchkey.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.Latchkey;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.PostgresLocks;
import dev.latchkey.shedlock.LatchkeyLockProvider;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * docs/migrating.md's Java examples, run: each configuration below holds its example line for line
 * ({@code scripts/check-docs.sh} fails when a block marked {@code compiled:} drifts from this file).
 * The ShedLock provider takes and refuses a lock as ShedLock would on {@code file://}; the registry that
 * replaces {@code JdbcLockRegistry} locks on the test PostgreSQL server through the application's
 * {@code DataSource}, in lease mode, and keeps a second manager out.
 */
class MigrationExamplesTest {
    @TempDir
    Path dir;

    /** "From ShedLock", the provider bean. */
    @Configuration(proxyBeanMethods = false)
    static class ShedLockProviderExample {
        @Bean(destroyMethod = "close")
        LockManager latchkey(@Value("${locks.uri}") String uri) {     // postgres://app@db.internal/app, file:///var/lib/app-locks, s3://bucket/locks, …
            return Latchkey.open(uri);
        }

        @Bean
        LockProvider lockProvider(LockManager latchkey) {
            return new LatchkeyLockProvider(latchkey);                  // or (latchkey, "shedlock/", owner): a key prefix, an owner
        }
    }

    /** "From Spring Integration's JdbcLockRegistry", on the application's pool. */
    @Configuration(proxyBeanMethods = false)
    static class JdbcLockRegistryExample {
        @Bean(destroyMethod = "close")
        LockManager latchkey(DataSource dataSource) {                        // the pool the application already has
            return PostgresLocks.open(dataSource, PostgresLocks.options()
                    .mode(PostgresLocks.Mode.LEASE).schema("app_locks"));      // a schema holds one mode's locks
        }

        @Bean
        LatchkeyLockRegistry lockRegistry(LockManager latchkey) {
            return new LatchkeyLockRegistry(latchkey, LeaseOptions.ttl(Duration.ofSeconds(30)));
        }
    }

    @Test
    void theShedLockProviderExampleLocksAsShedLockExpects() {
        new ApplicationContextRunner().withUserConfiguration(ShedLockProviderExample.class)
                .withPropertyValues("locks.uri=" + dir.toUri()).run(c -> {
                    LockProvider provider = c.getBean(LockProvider.class);
                    LockConfiguration nightly = new LockConfiguration(Instant.now(), "nightly-report",
                            Duration.ofSeconds(30), Duration.ZERO);
                    Optional<SimpleLock> first = provider.lock(nightly);
                    assertThat(first).as("the first lock").isPresent();
                    assertThat(provider.lock(nightly)).as("while it is held").isEmpty();
                    first.get().unlock();
                    Optional<SimpleLock> again = provider.lock(nightly);
                    assertThat(again).as("after the unlock").isPresent();
                    again.get().unlock();
                });
    }

    @Test
    void theRegistryReplacingJdbcLockRegistryLocksThroughTheApplicationsDataSource() {
        String server = ExternalServer.uri("LATCHKEY_TEST_POSTGRES_URI", "postgres");
        LockUri uri = LockUri.parse(server);
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setServerNames(new String[] {uri.host()});
        dataSource.setPortNumbers(new int[] {uri.port().orElse(5432)});
        dataSource.setDatabaseName(uri.path().replaceFirst("^/", ""));
        dataSource.setUser(uri.user().orElseThrow());
        dataSource.setPassword(uri.password().orElse(""));
        new ApplicationContextRunner().withUserConfiguration(JdbcLockRegistryExample.class)
                .withBean(DataSource.class, () -> dataSource).run(c -> {
                    Lock lock = c.getBean(LatchkeyLockRegistry.class).obtain("invoice-42");
                    assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                    try (LockManager other = Latchkey.open(ExternalServer.withParam(
                            ExternalServer.withParam(server, "mode", "lease"), "schema", "app_locks"))) {
                        assertThat(other.tryAcquire("invoice-42")).as("another instance, by URI on the same schema").isEmpty();
                        lock.unlock();
                        assertThat(other.tryAcquire("invoice-42")).as("after the unlock").hasValueSatisfying(l -> l.release());
                    }
                });
    }
}
