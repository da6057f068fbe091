package dev.latchkey.bench;

import dev.latchkey.spi.LockUri;
import java.util.concurrent.Semaphore;

/** A test peer for {@code mem://} with a handoff: one {@link Semaphore} shared by all sessions. */
public final class SemaphoreBaseline implements Baseline {
    private final Semaphore permit = new Semaphore(1);

    @Override
    public boolean supports(String scheme) {
        return scheme.equals("mem");
    }

    @Override
    public Kind kind() {
        return Kind.PEER;
    }

    @Override
    public String description() {
        return "Semaphore(1)";
    }

    @Override
    public boolean hasHandoff() {
        return true;
    }

    @Override
    public Session open(LockUri uri) {
        return new Session() {
            @Override
            public void acquire() {
                if (!permit.tryAcquire()) throw new IllegalStateException("semaphore unexpectedly taken");
            }

            @Override
            public void acquireWaiting() throws InterruptedException {
                permit.acquire();
            }

            @Override
            public void release() {
                permit.release();
            }

            @Override
            public void close() {}
        };
    }
}
