package dev.latchkey.cli;

import dev.latchkey.process.LockedProcess.GuardUnavailableException;
import java.io.IOException;
import java.io.PrintWriter;

/**
 * CMD, or the guard process that contains its job, could not be started: one stderr line says why,
 * and the status is a shell's (127 not found, 126 not executable), or 69 when no guard could be had.
 */
final class StartFailure {
    private StartFailure() {
    }

    static int report(IOException e, String program, PrintWriter err) {
        String msg = String.valueOf(e.getMessage());
        if (e instanceof GuardUnavailableException) {
            err.println("latchkey: " + msg);
            err.flush();
            return ExitCodes.UNAVAILABLE;
        }
        err.println("latchkey: cannot run '" + program + "': " + msg);
        err.flush();
        return msg.contains("error=2,") ? ExitCodes.NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
    }
}
