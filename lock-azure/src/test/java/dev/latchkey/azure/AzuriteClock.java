package dev.latchkey.azure;

import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockUri;
import dev.latchkey.tck.ExternalServer;
import dev.latchkey.tck.ServerClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * An Azurite of its own whose wall clock the kit can step ({@link ServerClock}): started once per
 * JVM, on first use, by {@code scripts/azurite.sh start DIR --faketime} — the server runs under
 * libfaketime, so its {@code Date} headers, {@code Last-Modified} and blob lease expiry are real time
 * plus the offset in a file it reads at every call — and stopped when the JVM exits. The same script
 * on either route (a container's clock cannot be stepped alone); both modes' contract classes share
 * it, each opening its managers its own way ({@link #clock}).
 */
final class AzuriteClock {
    /**
     * How far the server's {@code Date} may be from real time plus the offset once the step has
     * landed: it has whole seconds, and Node reuses the header's text for up to a second.
     */
    private static final long TOLERANCE_MILLIS = 2500;
    private static final Duration LANDS_WITHIN = Duration.ofSeconds(30);

    private static final class Started {
        static final AzuriteClock SERVER = start();
    }

    private final Path dir;
    private final String uri;

    private AzuriteClock(Path dir, String uri) {
        this.dir = dir;
        this.uri = uri;
    }

    /** The server, started on first call. */
    static AzuriteClock get() {
        return Started.SERVER;
    }

    /** The server's lock URI, as {@code scripts/azurite.sh} prints it (container created, no mode set). */
    String uri() {
        return uri;
    }

    /** The kit's hook: managers made by {@code open} from this server's URI and the kit's context; steps of this server's clock. */
    ServerClock clock(BiFunction<String, LockContext, LockManager> open) {
        return new ServerClock() {
            @Override
            public LockManager open(LockContext context) {
                return open.apply(uri, context);
            }

            @Override
            public void step(Duration offset) throws IOException, InterruptedException {
                AzuriteClock.this.step(offset);
            }
        };
    }

    private static AzuriteClock start() {
        try {
            Path dir = Files.createTempDirectory("latchkey-azurite-clock-");
            String uri = ExternalServer.script("azurite", "start", dir.toString(), "--faketime");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    ExternalServer.script("azurite", "stop", dir.toString());
                } catch (RuntimeException ignored) {
                    // the JVM is exiting; the script's own cleanup is best effort
                }
            }, "stop-azurite-clock"));
            return new AzuriteClock(dir, uri);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a state directory for the clock server", e);
        }
    }

    /** Whole seconds (libfaketime's offsets are); returns once the server's {@code Date} reads real time plus the offset. */
    private void step(Duration offset) throws IOException, InterruptedException {
        ExternalServer.script("azurite", "clock", dir.toString(), String.format("%+ds", offset.toSeconds()));
        long deadline = System.nanoTime() + LANDS_WITHIN.toNanos();
        while (true) {
            long before = System.currentTimeMillis();
            Instant server = serverDate();
            long off = server.toEpochMilli() - (before + System.currentTimeMillis()) / 2;
            if (Math.abs(off - offset.toMillis()) <= TOLERANCE_MILLIS) return;
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the clock server's Date is " + off + " ms from real time, "
                        + offset.toMillis() + " ms wanted, " + LANDS_WITHIN.toSeconds() + " s after the step");
            }
            TimeUnit.MILLISECONDS.sleep(100); // pacing: the next look
        }
    }

    /** The {@code Date} of the server's answer to an unsigned request (a 403 carries it too). */
    private Instant serverDate() throws IOException {
        String endpoint = LockUri.parse(uri).param("endpoint").orElseThrow();
        HttpURLConnection c = (HttpURLConnection) URI.create(endpoint + "?comp=list").toURL().openConnection();
        c.setConnectTimeout(5000);
        c.setReadTimeout(5000);
        try {
            c.getResponseCode();
            Instant date = dev.latchkey.spi.ServerClock.httpDate(c.getHeaderField("Date"));
            if (date == null) throw new IOException("the clock server answered without a Date header: " + c.getHeaderFields());
            return date;
        } finally {
            c.disconnect();
        }
    }
}
