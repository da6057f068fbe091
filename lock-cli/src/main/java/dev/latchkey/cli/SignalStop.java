package dev.latchkey.cli;

import dev.latchkey.process.LockedProcess;
import java.util.concurrent.CompletableFuture;

/**
 * latchkey's own SIGTERM/SIGINT/SIGHUP while CMD runs: the JVM does not end before CMD's job has been
 * stopped (SIGTERM, SIGKILL after the grace) and every process of it has exited, and only then is
 * {@code then} run (the lease given back). Registered before CMD starts, so that no signal can leave
 * CMD running without the lock; a signal that comes while CMD is starting waits for the start (the
 * future), and CMD is then stopped all the same. {@link #remove} it once CMD has exited.
 */
final class SignalStop {
    private final Thread hook;

    private SignalStop(Thread hook) {
        this.hook = hook;
    }

    /**
     * On a signal: {@code first}, then stop the job {@code child} completes with (null: CMD could not
     * be started), then {@code then}.
     */
    static SignalStop register(CompletableFuture<LockedProcess> child, Runnable first, Runnable then) {
        Thread hook = new Thread(() -> {
            first.run(); // ends a wait for the job slot: CMD is then not started
            LockedProcess running = child.join(); // null if CMD could not be started
            if (running != null) {
                running.terminate();
                try {
                    running.awaitTermination();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // shutting down: the guard finishes the job without us
                }
            }
            then.run();
        }, "latchkey-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        return new SignalStop(hook);
    }

    void remove() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running and finishes the job itself
        }
    }
}
