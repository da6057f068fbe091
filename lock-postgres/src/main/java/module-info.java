/**
 * The {@code postgres://} backend: {@code PostgresLocks} for an application's own {@code DataSource};
 * the URI route through {@code Latchkey.open("postgres://…")}. Only that package is exported: the two
 * modes ({@code .advisory}, {@code .lease}) and what they share ({@code .shared}) stay inside the module.
 */
module dev.latchkey.postgres {
    requires transitive dev.latchkey.api;
    requires transitive java.sql;
    requires org.postgresql.jdbc;

    exports dev.latchkey.postgres;

    provides dev.latchkey.spi.LockProvider with dev.latchkey.postgres.PostgresLockProvider;
}
