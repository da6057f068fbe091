package dev.latchkey.file;

import dev.latchkey.file.TokenFile.OnDisk;
import dev.latchkey.file.TokenFile.State;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Fencing tokens of one lock directory that never go back, not even after a power loss, without
 * an fsync per acquisition. One instance per directory per JVM ({@link Host#reservation}).
 *
 * <p><b>Guarantee.</b>
 * <ul>
 *   <li>Every token handed out is at most a high-water mark H that was durable in
 *       {@code DIR/.tokens} before it was handed out; the file's H never decreases.</li>
 *   <li>When the machine may have crashed since H was written — the boot id stored with it is not
 *       the current one, or the OS gives none — the first process to use the directory sets this
 *       boot's <em>floor</em> to H + 1, durably and with the current boot id, before it hands out
 *       anything; every token of this boot is at least the floor. Records a crash turned back (a
 *       lost write, a torn record read as absent) carry tokens of at most H, so the next token of
 *       every key exceeds every token handed out before the crash. Without a crash (same boot id)
 *       nothing is lost that reached the page cache, and there is no jump.</li>
 *   <li>Per key, tokens strictly increase: each is {@code max(previous + 1, floor)}, and the
 *       compare-and-swap on the record makes {@code previous} the token of the record it replaces.</li>
 * </ul>
 *
 * <p><b>Cost.</b> A token up to the H this JVM made durable comes from memory (one volatile read).
 * Past it, the JVM takes an OS lock on {@code .tokens}, re-reads it, writes H raised by a block
 * ({@link Host#BLOCK}) above the higher of the file's H and the token, and fdatasyncs: about one
 * fsync per block of tokens across all processes (each raise moves the shared H a block on), plus
 * one on each process's first use of the directory, plus two (file and directory) when the file is
 * created. A first use syncs even when it changes nothing: a writer that died between its write
 * and its sync may have left an H that is visible but not durable, and a process hands out tokens
 * only under an H it has synced itself. H stays within about a block per active process of the
 * highest token, so a reboot moves tokens up by no more than that.
 *
 * <p><b>Interrupts.</b> All I/O on {@code .tokens} runs on one private thread ({@link PrivateThread}):
 * an interrupted caller cannot close the channel, and so drop the OS lock, halfway through an update.
 */
final class TokenReservation {
    static final String FILE_NAME = ".tokens";
    private static final PrivateThread TOKENS = new PrivateThread("latchkey-file-tokens");

    /** {@code ceiling} 0: this JVM has reserved nothing yet (and so has not looked at the boot id). */
    private record Grant(long floor, long ceiling) {}

    private final Path file;
    private final Host host;
    private volatile Grant grant = new Grant(0, 0);

    TokenReservation(Path realDir, Host host) {
        this.file = realDir.resolve(FILE_NAME);
        this.host = host;
    }

    /** The token after {@code previous}, reserved durably (see the class comment). */
    long next(long previous) {
        Grant g = grant;
        long token = Math.max(previous + 1, g.floor());
        if (token <= g.ceiling()) return token;
        return TOKENS.call(() -> reserve(previous), "reserving fencing tokens in " + file);
    }

    /** On {@link #TOKENS} only. */
    private long reserve(long previous) throws IOException {
        Grant g = grant;
        long wanted = Math.max(previous + 1, g.floor());
        if (wanted <= g.ceiling()) return wanted; // a reservation queued before this one covered it
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
             FileLock ignored = ch.lock()) {
            OnDisk disk = TokenFile.read(ch);
            State cur = disk.state();
            Optional<String> boot = host.bootId();
            long high = cur == null ? 0 : cur.high();
            long floor;
            if (g.ceiling() > 0) {
                floor = Math.max(g.floor(), cur == null ? 1 : cur.floor()); // this JVM saw no crash since its first write
            } else if (cur != null && boot.isPresent() && boot.get().equals(cur.boot())) {
                floor = cur.floor(); // same boot as the last write: nothing was lost since
            } else {
                floor = high + 1; // a crash may have turned any record back to a token of at most H
            }
            long token = Math.max(previous + 1, floor);
            long known = Math.max(high, g.ceiling()); // the latter only matters if someone deleted the file
            long newHigh = g.ceiling() == 0 && token <= known
                    ? known // a first use within what others reserved: sync it, but do not move H for each new process
                    : Math.max(known, token - 1) + host.block();
            State next = new State(cur == null ? 1 : cur.seq() + 1, newHigh, floor, boot.orElse(null));
            if (cur == null) {
                TokenFile.create(ch, next);
                host.sync(ch, true);
                host.syncDirectory(file.getParent());
            } else {
                TokenFile.write(ch, 1 - disk.slot(), next);
                host.sync(ch, false);
            }
            grant = new Grant(floor, newHigh);
            return token;
        }
    }
}
