package dev.latchkey.postgres.lease;

import dev.latchkey.Latchkey;
import dev.latchkey.LockManager;
import dev.latchkey.postgres.shared.PgTestSupport;
import dev.latchkey.spi.LockContext;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.ServerClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A PostgreSQL server of its own whose wall clock the kit can step ({@link ServerClock}): started
 * once per JVM, on first use, by {@code scripts/postgres.sh start DIR --faketime} — the server runs
 * under libfaketime, its {@code clock_timestamp()} real time plus the offset in a file it reads at
 * every call — and stopped when the JVM exits. The same script on either route (a container's clock
 * cannot be stepped alone). Managers on it use mode=lease, as {@link LeaseTckTest}'s do.
 */
final class PgClockServer implements ServerClock {
    /** How far the server's clock may be from real time plus the offset once the step has landed. */
    private static final long TOLERANCE_MILLIS = 1000;
    private static final Duration LANDS_WITHIN = Duration.ofSeconds(30);

    private static final class Started {
        static final PgClockServer SERVER = start();
    }

    private final Path dir;
    private final String uri;

    private PgClockServer(Path dir, String uri) {
        this.dir = dir;
        this.uri = uri;
    }

    /** The server, started on first call. */
    static PgClockServer get() {
        return Started.SERVER;
    }

    private static PgClockServer start() {
        try {
            Path dir = Files.createTempDirectory("latchkey-postgres-clock-");
            String uri = ExternalServer.script("postgres", "start", dir.toString(), "--faketime");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    ExternalServer.script("postgres", "stop", dir.toString());
                } catch (RuntimeException ignored) {
                    // the JVM is exiting; the script's own cleanup is best effort
                }
            }, "stop-postgres-clock"));
            return new PgClockServer(dir, uri);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a state directory for the clock server", e);
        }
    }

    @Override
    public LockManager open(LockContext context) {
        return Latchkey.open(PgTestSupport.with(uri, PgTestSupport.LEASE), context);
    }

    /** Whole seconds (libfaketime's offsets are); returns once {@code clock_timestamp()} reads real time plus the offset. */
    @Override
    public void step(Duration offset) throws SQLException, InterruptedException {
        ExternalServer.script("postgres", "clock", dir.toString(), String.format("%+ds", offset.toSeconds()));
        long deadline = System.nanoTime() + LANDS_WITHIN.toNanos();
        try (Connection c = PgTestSupport.jdbc(uri); Statement s = c.createStatement()) {
            while (true) {
                long before = System.currentTimeMillis();
                long server;
                try (ResultSet rs = s.executeQuery("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8")) {
                    rs.next();
                    server = rs.getLong(1);
                }
                long off = server - (before + System.currentTimeMillis()) / 2;
                if (Math.abs(off - offset.toMillis()) <= TOLERANCE_MILLIS) return;
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("the clock server's clock is " + off + " ms from real time, "
                            + offset.toMillis() + " ms wanted, " + LANDS_WITHIN.toSeconds() + " s after the step");
                }
                TimeUnit.MILLISECONDS.sleep(20); // pacing: the next look
            }
        }
    }
}
