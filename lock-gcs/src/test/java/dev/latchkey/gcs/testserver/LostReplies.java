package dev.latchkey.gcs.testserver;

import dev.latchkey.gcs.testserver.GcsTestServer.LostReply;
import dev.latchkey.gcs.testserver.GcsTestServer.Request;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The faults tests arm on a {@link GcsTestServer}: answers to lose after the request was served in
 * full, for the next {@code count} requests of one kind on one object. Thread-safe.
 */
final class LostReplies {
    private static final class Armed {
        final Request request;
        final String bucket;
        final String object;
        final LostReply how;
        int left;

        Armed(Request request, String bucket, String object, LostReply how, int left) {
            this.request = request;
            this.bucket = bucket;
            this.object = object;
            this.how = how;
            this.left = left;
        }
    }

    private final List<Armed> armed = new ArrayList<>();
    private int lost;

    synchronized void arm(Request request, String bucket, String object, int count, LostReply how) {
        if (count < 1) throw new IllegalArgumentException("count must be at least 1, got " + count);
        armed.add(new Armed(request, bucket, object, how, count));
    }

    /** How to lose the answer to this request, or null to send it; counts the request against its fault. */
    synchronized LostReply take(Request request, String bucket, String object) {
        for (Iterator<Armed> it = armed.iterator(); it.hasNext(); ) {
            Armed a = it.next();
            if (a.request == request && a.bucket.equals(bucket) && a.object.equals(object)) {
                if (--a.left == 0) it.remove();
                lost++;
                return a.how;
            }
        }
        return null;
    }

    synchronized int lostSoFar() {
        return lost;
    }
}
