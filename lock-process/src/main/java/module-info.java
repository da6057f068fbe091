/**
 * A process run under a Latchkey lease, contained ({@code LockedProcess}); the guard's script and the
 * job slot stay inside the package.
 */
module dev.latchkey.process {
    requires dev.latchkey.api;
    exports dev.latchkey.process;
}
