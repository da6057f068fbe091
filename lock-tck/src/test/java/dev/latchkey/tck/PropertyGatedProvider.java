package dev.latchkey.tck;

import dev.latchkey.Latchkey;
import dev.latchkey.LockBackendException;
import dev.latchkey.LockManager;
import dev.latchkey.spi.LockContext;
import dev.latchkey.spi.LockProvider;
import dev.latchkey.spi.LockUri;
import java.util.Set;

/**
 * {@code tck-gated://name}: {@code mem://name}, opened only in a JVM whose system property
 * {@value #PROPERTY} is exactly {@link #VALUE} — a backend that needs a system property, for
 * {@link ChildJvmArgumentsTest}. The value has a space, quotes, a backslash and a non-ASCII letter,
 * so an argument passed on badly quoted does not match.
 */
public final class PropertyGatedProvider implements LockProvider {
    static final String PROPERTY = "latchkey.tck.gate";
    static final String VALUE = "open \"sesame\" C:\\gate ü";

    @Override
    public Set<String> schemes() {
        return Set.of("tck-gated");
    }

    @Override
    public String description() {
        return "mem:// behind a system property (the kit's test of child JVM arguments)";
    }

    @Override
    public LockManager open(LockUri uri, LockContext context) {
        String seen = System.getProperty(PROPERTY);
        if (!VALUE.equals(seen)) {
            throw new LockBackendException("system property " + PROPERTY + (seen == null ? " is not set" : " is " + seen), false);
        }
        return Latchkey.open("mem://" + uri.host(), context);
    }
}
