/**
 * What both PostgreSQL modes use: the validated settings, the connection pool and its sessions, the
 * schema and its registry (one mode per schema), error translation, and the managers' common base. Not
 * exported; imports neither mode.
 */
package dev.latchkey.postgres.shared;
