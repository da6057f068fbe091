package dev.latchkey.mem;

import dev.latchkey.Capability;
import dev.latchkey.LockManager;
import dev.latchkey.UnsupportedLockUriException;
import dev.latchkey.engine.ConditionalStoreLockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.util.EnumSet;
import java.util.Set;

/** {@code mem://NAME}: locks shared by every manager of this JVM that names the same store. */
public final class MemLockProvider implements LockProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("mem");
    }

    @Override
    public String description() {
        return "in-process locks for tests and single-JVM apps (reference backend)";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        uri.requireOnly(Set.of());
        if (uri.user().isPresent()) throw new UnsupportedLockUriException("mem:// takes no user info: " + uri);
        String name = uri.host() + uri.path();
        if (name.isEmpty()) throw new UnsupportedLockUriException("mem:// needs a name, e.g. mem://tests");
        return new ConditionalStoreLockManager(MemConditionalStore.named(name), context, EnumSet.of(Capability.SERVER_SIDE_EXPIRY, Capability.NATIVE_WAIT));
    }
}
