package dev.latchkey.postgres.advisory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.latchkey.Lease;
import dev.latchkey.LeaseOptions;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What identifies a lock on PostgreSQL: its database, schema and key. Clients that disagree on how
 * to lock a schema's keys (mode, table) used to both hold a key; now the second is refused, naming
 * both settings. Another schema is another lock space, with tokens of its own.
 */
class LockIdentityTest {
    private final String tag = "ident-" + UUID.randomUUID().toString().substring(0, 8);
    private final String schema = "ident_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final List<LockManager> managers = new ArrayList<>();
    private final List<String> schemas = new ArrayList<>();

    private LockManager open(String schemaName, String params) {
        if (!schemas.contains(schemaName)) schemas.add(schemaName);
        LockManager m = PgTestSupport.open("schema=" + schemaName + (params.isEmpty() ? "" : "&" + params));
        managers.add(m);
        return m;
    }

    @AfterEach
    void dropSchemas() throws Exception {
        managers.forEach(LockManager::close);
        try (Connection admin = PgTestSupport.jdbc(PgTestSupport.uri()); Statement st = admin.createStatement()) {
            for (String s : schemas) st.execute("DROP SCHEMA IF EXISTS \"" + s + "\" CASCADE");
        }
    }

    private static void assertRefused(LockManager m, String key, String... named) {
        assertThatThrownBy(() -> m.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))))
                .isExactlyInstanceOf(LockBackendException.class)
                .hasMessageContaining("identified by its database, schema and key")
                .hasMessageContaining(named[0]).hasMessageContaining(named[1])
                .hasMessageContaining(named[2]).hasMessageContaining(named[3])
                .satisfies(e -> assertThat(((LockBackendException) e).isRetriable()).isFalse());
    }

    @Test
    void aLeaseModeClientOfAnAdvisorySchemaIsRefusedWhileTheAdvisoryHolderHolds() {
        LockManager advisory = open(schema, "");
        LockManager lease = open(schema, "mode=lease");
        String key = tag + "/job";
        Lease held = advisory.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        assertRefused(lease, key, "mode=advisory", "latchkey_advisory", "mode=lease", "latchkey_leases");
        assertThat(held.isValid()).isTrue();
        held.release();
        assertRefused(lease, key, "mode=advisory", "latchkey_advisory", "mode=lease", "latchkey_leases");
    }

    @Test
    void anAdvisoryClientOfALeaseSchemaIsRefusedWhileTheLeaseHolderHolds() {
        LockManager lease = open(schema, "mode=lease");
        LockManager advisory = open(schema, "");
        String key = tag + "/job";
        Lease held = lease.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        assertRefused(advisory, key, "mode=lease", "latchkey_leases", "mode=advisory", "latchkey_advisory");
        assertThat(held.isValid()).isTrue();
        held.release();
    }

    /** Advisory lock ids are database-wide: another table in the schema would exclude, yet draw tokens from another sequence. */
    @Test
    void anotherLockTableInTheSameSchemaIsRefused() {
        LockManager first = open(schema, "");
        LockManager other = open(schema, "table=other_locks");
        String key = tag + "/job";
        Lease held = first.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        assertRefused(other, key, "mode=advisory", "latchkey_advisory", "mode=advisory", "other_locks");
        held.release();
    }

    @Test
    void eachSchemaIsALockSpaceOfItsOwnWithTokensOfItsOwn() {
        String otherSchema = schema + "_b";
        LockManager a = open(schema, "");
        LockManager b = open(otherSchema, "");
        String key = tag + "/job";
        assertThat(AdvisoryLockManager.lockId(schema, key)).isNotEqualTo(AdvisoryLockManager.lockId(otherSchema, key));
        Lease inA = a.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        Lease inB = b.tryAcquire(key, LeaseOptions.ttl(Duration.ofSeconds(60))).orElseThrow();
        assertThat(a.tryAcquire(key)).isEmpty();
        assertThat(b.tryAcquire(key)).isEmpty();
        inA.release();
        inB.release();
        try (Lease again = a.tryAcquire(key).orElseThrow()) {
            assertThat(again.fencingToken()).isGreaterThan(inA.fencingToken());
        }
    }
}
