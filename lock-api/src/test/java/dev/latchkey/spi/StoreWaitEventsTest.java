package dev.latchkey.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.latchkey.LockListener;
import java.time.Instant;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A store-side wait as {@link LockEvents} reports it: each refused call reaches the listener, on the
 * event thread, with its reason and end; its beginning is a log line only, no event. (The WARNING
 * itself, on a real store's wait: lock-postgres's PrivateServerTest, after a server restart; this
 * module does not read java.util.logging.)
 */
class StoreWaitEventsTest {

    @Test
    void eachStoreWaitReachesTheListenerOffTheCallersThread() throws Exception {
        BlockingQueue<String> heard = new LinkedBlockingQueue<>();
        LockListener listener = new LockListener() {
            @Override
            public void storeWait(String scheme, String key, String reason, Instant until) {
                heard.add(scheme + " " + key + " " + reason + " " + until + " " + (Thread.currentThread() == caller));
            }
        };
        try {
            LockEvents events = LeaseRuntime.create(LockContext.defaults().withListener(listener), "test").events();
            Instant until = Instant.parse("2026-12-03T16:00:00Z");
            caller = Thread.currentThread();
            events.storeWaitBegan("restart-guard", until, "the server restarted");
            events.storeWait("a", "restart-guard", until);
            events.storeWait("b", "restart-guard", until);

            // events come in order: had the beginning been one, it would come first
            assertThat(heard.poll(30, TimeUnit.SECONDS)).isEqualTo("test a restart-guard " + until + " false");
            assertThat(heard.poll(30, TimeUnit.SECONDS)).isEqualTo("test b restart-guard " + until + " false");
        } finally {
            caller = null;
        }
    }

    private static volatile Thread caller;
}
