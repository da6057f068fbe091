package dev.latchkey.file;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * What {@link FileConditionalStore} needs from the machine — the kernel's boot id, and the fsync that makes a
 * write durable — plus this JVM's {@link TokenReservation}s, one per directory.
 *
 * <p>{@link #THIS_MACHINE} is the only instance outside tests. A test builds others to play a
 * later boot or another process (each has its own reservations, as another JVM would) and to count
 * fsyncs; this is a package-private seam, not an API.
 */
final class Host {
    /**
     * Tokens reserved per durable write. One fsync per 65,536 acquisitions of the busiest key is
     * noise even at 40,000 acquisitions a second (1,024 would cost an fsync every 25 ms there);
     * the price is that after a reboot tokens jump by up to that much, which 63 bits absorb.
     */
    static final long BLOCK = 65_536;
    static final Host THIS_MACHINE = new Host(Host::linuxBootId, BLOCK);

    private static final Path LINUX_BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");
    private static final Pattern BOOT_ID = Pattern.compile("[0-9A-Za-z-]{1,64}");
    private static final boolean WINDOWS = System.getProperty("os.name", "").startsWith("Windows");

    private final Supplier<Optional<String>> bootId;
    private final long block;
    private final AtomicLong syncs = new AtomicLong();
    private final ConcurrentHashMap<Path, TokenReservation> reservations = new ConcurrentHashMap<>();

    /**
     * @param bootId changes whenever the machine boots; empty where the OS does not tell (then
     *               every new process on a directory assumes a crash may have happened)
     * @param block  tokens reserved per durable write
     */
    Host(Supplier<Optional<String>> bootId, long block) {
        if (block < 1) throw new IllegalArgumentException("block must be positive: " + block);
        this.bootId = bootId;
        this.block = block;
    }

    /** The reservation of this JVM (or test process) for directory {@code realDir}. */
    TokenReservation reservation(Path realDir) {
        return reservations.computeIfAbsent(realDir, d -> new TokenReservation(d, this));
    }

    long block() {
        return block;
    }

    /** The current boot id if the OS gives one in a form that fits the token file, else empty. */
    Optional<String> bootId() {
        return bootId.get().map(String::trim).filter(id -> BOOT_ID.matcher(id).matches());
    }

    /** {@code force} on {@code ch}: {@code metadata} false is {@code fdatasync}, true is {@code fsync}. */
    void sync(FileChannel ch, boolean metadata) throws IOException {
        ch.force(metadata);
        syncs.incrementAndGet();
    }

    /**
     * Makes the entries of {@code dir} durable (a file created or renamed in it). Windows cannot
     * open a directory; there the file's own {@code force} is all there is.
     */
    void syncDirectory(Path dir) throws IOException {
        if (WINDOWS) return;
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            sync(ch, true);
        }
    }

    /** fsyncs done through this host so far. */
    long syncs() {
        return syncs.get();
    }

    private static Optional<String> linuxBootId() {
        try {
            return Optional.of(Files.readString(LINUX_BOOT_ID));
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty(); // not Linux: no boot id
        }
    }
}
