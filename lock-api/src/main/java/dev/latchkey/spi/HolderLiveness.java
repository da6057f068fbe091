package dev.latchkey.spi;

/**
 * Optional extra of a {@link ConditionalStore} that can tell whether the process holding an
 * acquisition still runs (e.g. an OS file lock the holder keeps, released by the kernel when the
 * process dies). The engine uses it only to take over <em>earlier</em> than the TTL, never to
 * refuse a takeover the TTL allows.
 *
 * <p>Protocol: the engine {@link #attach attaches} to an acquisition <em>before</em> writing the
 * record that claims it, so no one can see the record without the mark; it detaches after release,
 * loss, or a failed write.
 */
public interface HolderLiveness {

    /** Marks acquisition {@code token} of {@code name} as held by this process; false if a live process already holds that mark. */
    boolean attach(String name, long token);

    void detach(String name, long token);

    /** True if some live process (this one included) holds the mark of acquisition {@code token}. */
    boolean isAlive(String name, long token);
}
