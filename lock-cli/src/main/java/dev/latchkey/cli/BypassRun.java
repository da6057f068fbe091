package dev.latchkey.cli;

import dev.latchkey.process.LockedProcess;
import dev.latchkey.process.LockedProcess.Guard;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code latchkey run --bypass-lock}: CMD without any lock, after a warning on stderr that it may run
 * beside the holder. The lock is neither taken nor looked at; what still holds is the containment of
 * CMD's job by a guard process, stopped (SIGTERM, SIGKILL after the grace) on latchkey's own
 * SIGTERM/SIGINT/SIGHUP before the JVM ends ({@link SignalStop}).
 */
final class BypassRun {
    private BypassRun() {
    }

    /** Runs CMD; returns its status, or a shell's when it could not be started. */
    static int run(String key, List<String> command, Duration grace, LockedProcess.Leftovers leftovers,
                   PrintWriter err) throws InterruptedException {
        err.println("latchkey: WARNING: --bypass-lock: running CMD without taking the lock '" + key
                + "'; it may run beside whoever holds it");
        err.flush();
        CompletableFuture<LockedProcess> child = new CompletableFuture<>();
        SignalStop signalStop = SignalStop.register(child, () -> {}, () -> {});
        Guard guard = null;
        try {
            guard = Guard.start(grace, leftovers);
            child.complete(LockedProcess.of(command).startWithoutLease(guard));
            return child.join().waitFor();
        } catch (IOException e) {
            return StartFailure.report(e, command.get(0), err);
        } finally {
            child.complete(null); // no-op once started; lets a signal's hook go on after a failed start
            signalStop.remove();
            if (guard != null) guard.abandon();
        }
    }
}
