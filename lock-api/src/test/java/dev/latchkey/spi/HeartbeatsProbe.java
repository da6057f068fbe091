package dev.latchkey.spi;

import java.util.concurrent.RunnableScheduledFuture;

/**
 * Run in a fresh JVM by {@link HeartbeatsTest}: touches {@link Heartbeats} the way code that
 * merely uses a lease API does, reports whether the timer thread exists, then starts the timer
 * and reports again. Thread starts are synchronous, so no waiting is needed.
 */
public final class HeartbeatsProbe {
    private HeartbeatsProbe() {}

    public static void main(String[] args) throws Exception {
        Class.forName(Heartbeats.class.getName(), true, HeartbeatsProbe.class.getClassLoader());
        System.out.println("afterLoad.timerThread=" + timerThreadExists());
        LeaseRuntime runtime = LeaseRuntime.create(LockContext.defaults(), "probe");
        System.out.println("afterRuntime.timerThread=" + timerThreadExists() + " renewers=" + runtime.threads());

        var timer = Heartbeats.scheduler();
        System.out.println("afterScheduler.timerThread=" + timerThreadExists());
        System.out.println("afterScheduler.keepAliveTicks=" + timer.getQueue().stream()
                .filter(r -> r instanceof RunnableScheduledFuture<?> f && f.isPeriodic()).count());

        runtime.later(java.time.Duration.ofMinutes(5), () -> {});
        System.out.println("afterLater.keepAliveTicks=" + timer.getQueue().stream()
                .filter(r -> r instanceof RunnableScheduledFuture<?> f && f.isPeriodic()).count());
    }

    private static boolean timerThreadExists() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith("latchkey-heartbeat-timer"));
    }
}
