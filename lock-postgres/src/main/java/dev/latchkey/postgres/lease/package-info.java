/**
 * {@code mode=lease}: a lease table whose rows expire by the server's clock
 * ({@link dev.latchkey.postgres.lease.LeaseTableLockManager} states the guarantee). Not exported; built
 * on {@code dev.latchkey.postgres.shared}, never on {@code mode=advisory}'s package.
 */
package dev.latchkey.postgres.lease;
