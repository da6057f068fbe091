package dev.latchkey.bench;

import dev.latchkey.spi.LockUri;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The cheapest way to do what a backend does for one acquire+release, without Latchkey: the
 * number {@code latchkey bench} compares the backend against ("floor" row and ratio). A backend
 * module adds its own by shipping an implementation listed in
 * {@code META-INF/services/dev.latchkey.bench.Floor}; schemes without one simply print no floor.
 *
 * <p>A floor is measured in the same run, on the same machine and the same store as the backend,
 * so the ratio is meaningful even when absolute numbers are not.
 */
public interface Floor {

    /** Whether this floor is the baseline for URIs of {@code scheme}. */
    boolean supports(String scheme);

    /** What is measured, e.g. {@code ConcurrentHashMap.putIfAbsent+remove}. */
    String description();

    /** Prepares the primitive next to the backend named by {@code uri}. */
    Op open(LockUri uri) throws Exception;

    /** One prepared primitive, used by one thread at a time. */
    interface Op extends AutoCloseable {
        /** One uncontended acquire followed by its release. */
        void acquireRelease() throws Exception;

        @Override
        void close() throws Exception;
    }

    /** The first installed floor for {@code scheme}, if any. */
    static Optional<Floor> forScheme(String scheme) {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        for (Floor f : ServiceLoader.load(Floor.class, cl != null ? cl : Floor.class.getClassLoader())) {
            if (f.supports(scheme)) return Optional.of(f);
        }
        return Optional.empty();
    }
}
