package dev.latchkey.file;

import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * {@code file:///DIR} (or {@code file://~/DIR}): locks in a local directory, the embedded default of
 * the {@code latchkey} command. Optional {@code poll=50ms}: longest pause between looks while waiting.
 */
public final class FileLockProvider implements LockProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("file");
    }

    @Override
    public String description() {
        return "lock files in a local directory; OS file locks detect dead holders";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        uri.requireOnly(Set.of("poll"));
        if (uri.user().isPresent()) throw new UnsupportedLockUriException("file:// takes no user info: " + uri);
        String path = uri.host().isEmpty() ? uri.path() : uri.host() + uri.path();
        if (path.startsWith("~")) path = System.getProperty("user.home") + path.substring(1);
        if (path.isEmpty()) throw new UnsupportedLockUriException("file:// needs a directory, e.g. file:///var/lock/latchkey");
        Duration poll = uri.durationParam("poll", Duration.ofMillis(50));
        return new ConditionalStoreLockManager(new FileConditionalStore(Path.of(path)), context, Set.of(), poll);
    }
}
