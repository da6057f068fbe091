package dev.latchkey.spring;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * What the application logged while open: the tests' SLF4J binding (slf4j-simple) writes to
 * {@code System.err}, teed here, and Latchkey's own {@code System.Logger} (logger
 * {@code dev.latchkey.events}) goes to {@code java.util.logging}, recorded by a handler, each record
 * as {@code LEVEL message}. Boot's logging set-up resets {@code java.util.logging}'s handlers when an
 * application starts: to record Latchkey's events, open this after the start. (Boot's own
 * OutputCaptureExtension needs a newer JUnit than the build's.)
 */
final class CapturedLog implements AutoCloseable {
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private final PrintStream originalErr = System.err;
    private final Logger events = Logger.getLogger("dev.latchkey.events");
    private final Handler handler = new Handler() {
        @Override public void publish(LogRecord r) {
            append(r.getLevel() + " " + r.getMessage() + System.lineSeparator());
        }
        @Override public void flush() {}
        @Override public void close() {}
    };

    CapturedLog() {
        System.setErr(new PrintStream(new OutputStream() {
            @Override public void write(int b) {
                originalErr.write(b);
                synchronizedWrite(new byte[] {(byte) b}, 0, 1);
            }
            @Override public void write(byte[] b, int off, int len) {
                originalErr.write(b, off, len);
                synchronizedWrite(b, off, len);
            }
        }, true, StandardCharsets.UTF_8));
        events.addHandler(handler);
    }

    private void append(String line) {
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        synchronizedWrite(bytes, 0, bytes.length);
    }

    private void synchronizedWrite(byte[] b, int off, int len) {
        synchronized (buffer) { // test code: NoMonitorsTest covers main sources only
            buffer.write(b, off, len);
        }
    }

    String text() {
        synchronized (buffer) {
            return buffer.toString(StandardCharsets.UTF_8);
        }
    }

    /** How often {@code text} occurs in what was logged. */
    int count(String text) {
        return text().split(Pattern.quote(text), -1).length - 1;
    }

    @Override
    public void close() {
        events.removeHandler(handler);
        System.setErr(originalErr);
    }
}
