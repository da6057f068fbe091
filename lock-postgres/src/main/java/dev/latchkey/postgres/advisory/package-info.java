/**
 * {@code mode=advisory}: a session-level advisory lock per key, held on a server session pinned for the
 * lease's life ({@link dev.latchkey.postgres.advisory.AdvisoryLockManager} states the guarantee). Not
 * exported; built on {@code dev.latchkey.postgres.shared}, never on {@code mode=lease}'s package.
 */
package dev.latchkey.postgres.advisory;
