package dev.latchkey.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A shared referee for code that claims to run under a lock, within one JVM. Every thread that
 * believes it holds the lock calls {@link #enter}, {@link #work} and {@link #exit} (or
 * {@link #section}); afterwards the test asks:
 * <ul>
 *   <li>{@link #overlaps()}: how many times a thread entered while another was inside — any
 *       value above zero means two holders at once;</li>
 *   <li>{@link #counter()}: a plain read-yield-write counter; with real mutual exclusion it equals
 *       the number of sections, any shortfall is a lost update;</li>
 *   <li>{@link #tokens()}: the fencing tokens in the order sections were entered; with
 *       {@code FENCING_TOKENS} they must strictly increase ({@link #tokenOrderViolations()}).</li>
 * </ul>
 * Thread-safe. Detection is best effort (an overlap must actually happen to be seen), never a
 * false alarm: a correct lock always yields zero overlaps, an exact counter and increasing tokens.
 */
public final class CriticalSectionChecker {
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger sections = new AtomicInteger();
    /* volatile for visibility only: the increment in work() is deliberately not atomic, so only
       the lock under test keeps it exact. Without volatile a correct lock whose hand-over gives no
       Java happens-before edge (a remote store) could show a stale value: a false alarm. */
    private volatile long counter;
    private final ReentrantLock tokensLock = new ReentrantLock();
    private final List<Long> tokens = new ArrayList<>(); // guarded by tokensLock

    /** Marks the start of a critical section held under {@code fencingToken} (0 if none). */
    public void enter(long fencingToken) {
        if (inside.getAndIncrement() != 0) overlaps.incrementAndGet();
        sections.incrementAndGet();
        tokensLock.lock();
        try {
            tokens.add(fencingToken);
        } finally {
            tokensLock.unlock();
        }
    }

    /** The unprotected read-modify-write that a second holder would corrupt. Call between enter and exit. */
    public void work() {
        long seen = counter;
        Thread.yield(); // widen the window in which an overlapping holder would interleave
        counter = seen + 1;
    }

    /** Marks the end of the current critical section. */
    public void exit() {
        inside.decrementAndGet();
    }

    /** {@link #enter}, {@link #work}, {@link #exit} in one call. */
    public void section(long fencingToken) {
        enter(fencingToken);
        try {
            work();
        } finally {
            exit();
        }
    }

    public int overlaps() {
        return overlaps.get();
    }

    public int sections() {
        return sections.get();
    }

    public long counter() {
        return counter;
    }

    /** Fencing tokens in the order their sections were entered. */
    public List<Long> tokens() {
        tokensLock.lock();
        try {
            return List.copyOf(tokens);
        } finally {
            tokensLock.unlock();
        }
    }

    /** Descriptions of every place where a token was not greater than the one before it. */
    public List<String> tokenOrderViolations() {
        List<Long> t = tokens();
        List<String> bad = new ArrayList<>();
        for (int i = 1; i < t.size(); i++) {
            if (t.get(i) <= t.get(i - 1)) {
                bad.add("section " + i + " entered with token " + t.get(i) + " after token " + t.get(i - 1));
            }
        }
        return bad;
    }

    /**
     * Every invariant broken so far, one line each, empty when none: overlaps, lost updates, and
     * with {@code fencing} tokens out of order (the first ten, then a count).
     */
    public List<String> problems(boolean fencing) {
        List<String> found = new ArrayList<>();
        if (overlaps() > 0) {
            found.add("overlapping critical sections: " + overlaps()
                    + " times a holder entered while another was inside (two holders at once)");
        }
        if (counter() != sections()) {
            found.add("lost updates: the unprotected counter is " + counter() + " after " + sections() + " sections");
        }
        List<String> order = tokenOrderViolations();
        if (fencing && !order.isEmpty()) found.add("fencing tokens in order of entry: " + TckFixture.listed(order));
        return found;
    }

    /** A one-line summary for assertion messages. */
    public String summary() {
        return "sections=" + sections() + ", overlaps=" + overlaps() + ", counter=" + counter()
                + ", tokenOrderViolations=" + tokenOrderViolations().size();
    }
}
