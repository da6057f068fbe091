/**
 * Latchkey's API and the embedded backends: what this module exports is what users and backend
 * authors may rely on, and what the build's API check ({@code japicmp}, against {@code api-baseline/})
 * keeps compatible.
 * <ul>
 *   <li>{@code dev.latchkey}: the API users call ({@code Latchkey.open}, {@code LockManager}, {@code Lease}, …);</li>
 *   <li>{@code dev.latchkey.spi}: what a backend implements or uses ({@code LockProvider},
 *       {@code ConditionalStore}, {@code ManagedLease}, {@code LockContext}, …);</li>
 *   <li>{@code dev.latchkey.engine}: the lease engine that turns a {@code ConditionalStore} into a
 *       {@code LockManager}; exported to everyone because backends outside this repository build
 *       their managers with it (as the S3, GCS and Azure backends and the Redis example do).</li>
 * </ul>
 * {@code dev.latchkey.file} and {@code dev.latchkey.mem} are not exported: their backends are
 * reached through {@code Latchkey.open("file://…")} and {@code "mem://…"} only.
 */
module dev.latchkey.api {
    exports dev.latchkey;
    exports dev.latchkey.spi;
    exports dev.latchkey.engine;

    uses dev.latchkey.spi.LockProvider;
    provides dev.latchkey.spi.LockProvider with dev.latchkey.mem.MemLockProvider, dev.latchkey.file.FileLockProvider;
}
