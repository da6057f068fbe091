package dev.latchkey;

import dev.latchkey.spi.LockContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Run by {@link VirtualThreadsTest} on a JDK with virtual threads (21+), with one carrier thread.
 * Arguments: {@code THREADS KEYS URI...}; for each URI in turn, {@code THREADS} virtual threads
 * contend for {@code KEYS} keys, each taking a lease, checking it holds the key alone with a fencing
 * token above every earlier one, and releasing it; the manager's own threads are virtual too
 * ({@link LockContext#withThreadFactory}). JFR records every {@code jdk.VirtualThreadPinned} event,
 * and every {@code Object.wait} and contended monitor entry ({@code jdk.JavaMonitorWait},
 * {@code jdk.JavaMonitorEnter}, threshold 0): on Java 24+ those no longer pin (JEP 491), but on
 * Java 21-23 they would, so one on a virtual thread counts as pinning (the probe's own code uses no
 * monitors, so what is recorded comes from the library or the JDK code it calls). Prints
 * a line per URI and a summary, and exits 0 only if every thread finished, no key was ever held
 * twice, tokens rose, and nothing pinned or would have; else prints what went wrong and exits 1.
 *
 * <p>Compiled for Java 17, so virtual threads are reached by reflection.
 */
public final class VirtualThreadsProbe {
    private VirtualThreadsProbe() {}

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int keys = Integer.parseInt(args[1]);
        Queue<String> problems = new ConcurrentLinkedQueue<>();
        Path jfr = Files.createTempFile("latchkey-pinning", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            // what pins on Java 21-23 but no longer on 24+ (JEP 491): waits in and contention for monitors
            recording.enable("jdk.JavaMonitorWait").withThreshold(Duration.ZERO).withStackTrace();
            recording.enable("jdk.JavaMonitorEnter").withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            for (String uri : List.of(args).subList(2, args.length)) contend(uri, threads, keys, problems);
            recording.stop();
            recording.dump(jfr);
            int pinned = 0;
            int monitors = 0;
            for (RecordedEvent e : RecordingFile.readAllEvents(jfr)) {
                String type = e.getEventType().getName();
                if (type.equals("jdk.VirtualThreadPinned")) {
                    if (++pinned <= 3) problems.add("pinned " + e.getDuration().toMillis() + " ms at" + frames(e));
                } else if (e.getThread() != null && e.getThread().getBoolean("virtual")) {
                    // a virtual thread's stack here is cut at the continuation: the monitor's class says whose it was
                    if (++monitors <= 3) problems.add(type + " on virtual thread " + e.getThread().getJavaName() + ", monitor of class "
                            + e.getClass("monitorClass").getName());
                }
            }
            System.out.println("jdk.VirtualThreadPinned events: " + pinned + ", monitor waits and contention on virtual"
                    + " threads: " + monitors + " (Java " + Runtime.version().feature()
                    + ", carrier threads: " + System.getProperty("jdk.virtualThreadScheduler.parallelism") + ")");
            if (pinned + monitors > 0) problems.add("virtual threads pinned, or would pin on Java 21-23");
        } finally {
            Files.deleteIfExists(jfr);
        }
        problems.forEach(System.out::println);
        System.exit(problems.isEmpty() ? 0 : 1);
    }

    /** {@code threads} virtual threads take and give back leases on {@code keys} keys of {@code uri}, once each. */
    private static void contend(String uri, int threads, int keys, Queue<String> problems) throws Exception {
        ThreadFactory virtual = virtualThreads();
        AtomicInteger[] holders = new AtomicInteger[keys];
        AtomicLong[] lastToken = new AtomicLong[keys];
        for (int k = 0; k < keys; k++) {
            holders[k] = new AtomicInteger();
            lastToken[k] = new AtomicLong(Long.MIN_VALUE);
        }
        AtomicInteger done = new AtomicInteger();
        long started = System.nanoTime();
        try (LockManager locks = Latchkey.open(uri, LockContext.defaults().withThreadFactory(virtual))) {
            ExecutorService pool = (ExecutorService) Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class)
                    .invoke(null, virtual);
            for (int i = 0; i < threads; i++) {
                int k = i % keys;
                pool.execute(() -> {
                    try (Lease lease = locks.acquire("vt-" + k, Duration.ofMinutes(2))) {
                        if (holders[k].incrementAndGet() != 1) problems.add(uri + ": key vt-" + k + " held twice");
                        long token = lease.fencingToken();
                        if (token <= lastToken[k].getAndSet(token)) problems.add(uri + ": token of vt-" + k + " did not rise: " + token);
                        Thread.yield(); // let the others run while the key is held
                        holders[k].decrementAndGet();
                    } catch (RuntimeException e) {
                        problems.add(uri + ": a thread failed: " + e);
                        return;
                    }
                    done.incrementAndGet();
                });
            }
            pool.shutdown();
            if (!pool.awaitTermination(3, TimeUnit.MINUTES)) problems.add(uri + ": not finished within 3 minutes");
        }
        System.out.println(uri.substring(0, uri.indexOf(':')) + ": " + done.get() + "/" + threads + " virtual threads finished on "
                + keys + " keys in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms");
        if (done.get() != threads) problems.add(uri + ": " + (threads - done.get()) + " virtual threads did not finish");
    }

    /** {@code Thread.ofVirtual().name("latchkey-vt-", 0).factory()}, by reflection. */
    private static ThreadFactory virtualThreads() throws ReflectiveOperationException {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
        builder = ofVirtual.getMethod("name", String.class, long.class).invoke(builder, "latchkey-vt-", 0L);
        return (ThreadFactory) ofVirtual.getMethod("factory").invoke(builder);
    }

    private static String frames(RecordedEvent e) {
        if (e.getStackTrace() == null) return "(no stack)";
        StringBuilder s = new StringBuilder();
        for (RecordedFrame f : e.getStackTrace().getFrames().subList(0, Math.min(12, e.getStackTrace().getFrames().size()))) {
            s.append("\n    ").append(f.getMethod().getType().getName()).append('.').append(f.getMethod().getName())
                    .append(':').append(f.getLineNumber());
        }
        return s.toString();
    }
}
