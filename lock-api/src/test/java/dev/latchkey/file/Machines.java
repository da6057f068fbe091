package dev.latchkey.file;

import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.ConditionalStore;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockNames;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Set;

/** Test stand-ins for machines and JVMs: each {@link Host} is one JVM, on the boot it is given. */
final class Machines {
    private Machines() {}

    /** A new JVM on boot {@code bootId}, reserving tokens in blocks of {@link Host#BLOCK}. */
    static Host jvmOnBoot(String bootId) {
        return jvmOnBoot(bootId, Host.BLOCK);
    }

    static Host jvmOnBoot(String bootId, long block) {
        return new Host(() -> Optional.of(bootId), block);
    }

    /** A new JVM on an OS that gives no boot id. */
    static Host jvmWithoutBootId() {
        return new Host(Optional::empty, Host.BLOCK);
    }

    static ConditionalStoreLockManager manager(Host host, Path dir) {
        return manager(new FileConditionalStore(dir, host));
    }

    static ConditionalStoreLockManager manager(ConditionalStore store) {
        return new ConditionalStoreLockManager(store, LockContext.defaults(), Set.of());
    }

    static Path recordFile(Path dir, String key) {
        return dir.resolve(LockNames.encode(key) + ".lease");
    }

    /** The state in {@code DIR/.tokens} as a crash would find it (the newest intact slot). */
    static TokenFile.State tokenFile(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir.resolve(TokenReservation.FILE_NAME), StandardOpenOption.READ)) {
            return TokenFile.read(ch).state();
        }
    }
}
