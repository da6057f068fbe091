package dev.latchkey.bench.peers;

import dev.latchkey.bench.Baseline;
import dev.latchkey.spi.LockUri;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.postgresql.Driver;
import org.postgresql.PGProperty;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * Peer baseline for {@code postgres://}: Spring Integration's {@link JdbcLockRegistry} over a
 * {@link DefaultLockRepository} on the same database, configured as a Spring context would but without one.
 *
 * <ul>
 *   <li>Every session of one peer object locks the same key (random per peer object), so two sessions can
 *       hand it off; each session has its own connection, {@link DefaultLockRepository} (its own client id)
 *       and {@link JdbcLockRegistry}, i.e. it stands for another process, and the handoff really crosses
 *       registries through the table.</li>
 *   <li>The lock table is Spring's own PostgreSQL DDL for {@code INT_LOCK}
 *       ({@code org/springframework/integration/jdbc/schema-postgresql.sql} in the jar) under a random table
 *       prefix per peer object, so it clashes with nothing; created by the first open session, dropped by the
 *       last one to close.</li>
 *   <li>{@link Session#acquire()} is {@code tryLock()} (one attempt: an {@code UPDATE}, then an {@code INSERT}, in
 *       one READ COMMITTED transaction), {@link Session#release()} is {@code unlock()} (a {@code DELETE} in its own
 *       transaction), {@link Session#acquireWaiting()} is {@code lock()}, which polls: one attempt, then sleeps
 *       {@code idleBetweenTries} — left at Spring's default of 100 ms — and tries again, so a handoff costs up to
 *       that much more than a store round trip. The lock TTL is left at Spring's default of 10 s.</li>
 *   <li>Under contention, beside {@code mode=lease} only (the design the registry shares: a row per key with
 *       its owner and expiry, in one table), key i is the registry's key {@code <key>-i}: a round is {@code
 *       tryLock()} then, when it got the lock, {@code unlock()}, and a key another session's registry holds in
 *       the table is busy, as a held key is for the lock. Each session's lock of key i is its registry's own,
 *       so the JVM-local {@link java.util.concurrent.locks.ReentrantLock} Spring takes first is never the one
 *       that finds it busy.</li>
 *   <li>The {@link javax.sql.DataSource} is one connection per session ({@link SingleConnectionDataSource}, close
 *       suppressed), like a warm connection pool of one: a non-pooling data source would open a connection (TCP
 *       plus SCRAM authentication) for every transaction and measure that instead of the lock.</li>
 * </ul>
 */
public final class SpringJdbcLockRegistryBaseline implements Baseline {
    /** Latchkey's own {@code postgres://} parameters (see lock-postgres): everything else is a PgJDBC property. */
    private static final Set<String> LATCHKEY_PARAMS = Set.of("mode", "schema", "table", "pool", "poll", "timeout", "fencing");
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,49}");
    private static final String SPRING_DDL = "org/springframework/integration/jdbc/schema-postgresql.sql";
    private static final Pattern LOCK_TABLE_DDL = Pattern.compile("CREATE TABLE INT_LOCK\\s*\\(.*?\\)\\s*;", Pattern.DOTALL);

    private final String key = "latchkey-bench-spring-" + UUID.randomUUID();
    /** Table prefix without schema: the table is {@code <stem>lock}, its primary key {@code <stem>lock_pk}. */
    private final String stem = "latchkey_bench_spring_" + UUID.randomUUID().toString().substring(0, 8) + "_";
    /**
     * Guards {@link #open} and the table's DDL together, held across the {@code CREATE}/{@code DROP}: a
     * session never opens on a table the last one is dropping. Harness bookkeeping, outside every timed
     * call; the registry under measurement takes its own locks.
     */
    private final ReentrantLock tableUse = new ReentrantLock();
    /** Open sessions; the first creates the table, the last to close drops it. Guarded by {@link #tableUse}. */
    private int open;

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("postgres") || scheme.equals("postgresql");
    }

    @Override
    public Kind kind() {
        return Kind.PEER;
    }

    @Override
    public String description() {
        String version = JdbcLockRegistry.class.getPackage().getImplementationVersion();
        return "Spring Integration " + (version != null ? version : "7.1") + " JdbcLockRegistry lock+unlock";
    }

    @Override
    public boolean hasHandoff() {
        return true;
    }

    @Override
    public boolean hasSpread(LockUri uri) {
        return uri.param("mode", "advisory").equalsIgnoreCase("lease");
    }

    /** The random key every session of this peer locks. */
    String key() {
        return key;
    }

    /** The lock table's name as PostgreSQL stores it (unquoted, so folded to lower case), without schema. */
    String tableName() {
        return stem + "lock";
    }

    @Override
    public Session open(LockUri uri) throws Exception {
        Jdbc jdbc = Jdbc.of(uri);
        String prefix = jdbc.schema.map(s -> s + ".").orElse("") + stem;
        Connection connection = new Driver().connect(jdbc.url, jdbc.properties);
        if (connection == null) throw new SQLException("PgJDBC refused " + jdbc.url);
        SingleConnectionDataSource dataSource = new SingleConnectionDataSource(connection, true);
        try {
            JdbcTemplate sql = new JdbcTemplate(dataSource);
            tableUse.lock();
            try {
                if (open == 0) sql.execute(lockTableDdl(prefix));
                open++;
            } finally {
                tableUse.unlock();
            }
            try {
                return new SpringSession(dataSource, sql, prefix);
            } catch (Exception | Error e) {
                closed(sql, prefix);
                throw e;
            }
        } catch (Exception | Error e) {
            dataSource.destroy();
            throw e;
        }
    }

    /** One session has closed; the last one drops the table. */
    private void closed(JdbcTemplate sql, String prefix) {
        tableUse.lock();
        try {
            if (--open == 0) sql.execute("DROP TABLE IF EXISTS " + prefix + "LOCK");
        } finally {
            tableUse.unlock();
        }
    }

    /** Spring's own {@code CREATE TABLE INT_LOCK} for PostgreSQL, with our prefix and {@code IF NOT EXISTS}. */
    String lockTableDdl(String prefix) throws IOException {
        String script;
        try (InputStream in = JdbcLockRegistry.class.getClassLoader().getResourceAsStream(SPRING_DDL)) {
            if (in == null) throw new IOException(SPRING_DDL + " is not on the class path");
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher m = LOCK_TABLE_DDL.matcher(script);
        if (!m.find()) throw new IOException("no CREATE TABLE INT_LOCK in " + SPRING_DDL);
        return m.group()
                .replace("INT_LOCK_PK", stem + "LOCK_PK") // an index: its name must be unique in the schema too
                .replace("CREATE TABLE INT_LOCK", "CREATE TABLE IF NOT EXISTS " + prefix + "LOCK");
    }

    /** One process's view: a connection, a repository with its own client id, a registry, the lock. */
    private final class SpringSession implements Session {
        private final SingleConnectionDataSource dataSource;
        private final JdbcTemplate sql;
        private final String prefix;
        private final DefaultLockRepository repository;
        private final JdbcLockRegistry registry;
        private final DistributedLock lock;
        private boolean closed;

        SpringSession(SingleConnectionDataSource dataSource, JdbcTemplate sql, String prefix) {
            this.dataSource = dataSource;
            this.sql = sql;
            this.prefix = prefix;
            DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
            transactions.afterPropertiesSet();
            repository = new DefaultLockRepository(dataSource);
            repository.setPrefix(prefix);
            repository.setTransactionManager(transactions);
            // what a Spring context does with these beans: properties set, singletons instantiated, then
            // SmartLifecycle.start() (isAutoStartup: checks that the table exists)
            repository.afterPropertiesSet();
            repository.afterSingletonsInstantiated();
            repository.start();
            registry = new JdbcLockRegistry(repository); // idleBetweenTries 100 ms, ttl 10 s
            lock = registry.obtain(key);
        }

        @Override
        public void acquire() {
            if (!lock.tryLock()) {
                throw new IllegalStateException("JdbcLockRegistry.tryLock() found " + key + " held by another registry");
            }
        }

        @Override
        public void acquireWaiting() {
            lock.lock();
        }

        @Override
        public void release() {
            lock.unlock();
        }

        @Override
        public boolean tryRound(int i) {
            DistributedLock keyed = registry.obtain(key + "-" + i); // cached by the registry after the first round
            if (!keyed.tryLock()) return false;
            keyed.unlock();
            return true;
        }

        @Override
        public void close() {
            if (closed) return;
            closed = true;
            try {
                try {
                    // what the context does at shutdown: stop the lifecycle, then close (deletes this client's rows)
                    repository.stop();
                    repository.close();
                } finally {
                    closed(sql, prefix);
                }
            } finally {
                dataSource.destroy();
            }
        }
    }

    /** Where and how to connect, from a {@code postgres://} URI as lock-postgres reads it; no secret in messages. */
    static final class Jdbc {
        final String url;
        final Properties properties;
        final Optional<String> schema;

        private Jdbc(String url, Properties properties, Optional<String> schema) {
            this.url = url;
            this.properties = properties;
            this.schema = schema;
        }

        static Jdbc of(LockUri uri) {
            return of(uri, System.getenv());
        }

        static Jdbc of(LockUri uri, Map<String, String> env) {
            String host = uri.host().isEmpty() ? "localhost" : uri.host();
            int port = uri.port().orElse(5432);
            String user = uri.user().orElse(env.getOrDefault("PGUSER", System.getProperty("user.name")));
            String db = uri.path().startsWith("/") ? uri.path().substring(1) : uri.path();
            if (db.isEmpty()) db = env.getOrDefault("PGDATABASE", user);
            Optional<String> schema = uri.param("schema");
            if (schema.isPresent() && !IDENTIFIER.matcher(schema.get()).matches()) {
                throw new IllegalArgumentException("schema must be a plain SQL identifier in " + uri);
            }
            Properties properties = new Properties();
            uri.params().forEach((name, value) -> {
                if (!LATCHKEY_PARAMS.contains(name) && PGProperty.forName(name) != null) properties.setProperty(name, value);
            });
            properties.setProperty("user", user);
            String password = uri.password().orElse(uri.param("password").orElse(env.get("PGPASSWORD")));
            if (password != null) properties.setProperty("password", password);
            properties.putIfAbsent("ApplicationName", "latchkey-bench-spring");
            properties.putIfAbsent("connectTimeout", "10");
            String hostPart = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
            String url = "jdbc:postgresql://" + hostPart + ":" + port + "/"
                    + java.net.URLEncoder.encode(db, StandardCharsets.UTF_8).replace("+", "%20");
            return new Jdbc(url, properties, schema);
        }
    }
}
