/**
 * Tenants: every row of a shared store belongs to one. The embedded SQLite store has exactly
 * one, `default`; a PostgreSQL store has those its owner made (`omotai tenant add`).
 *
 * @module
 */

/** Tenant ids: what an operator types, and safe in a log line. */
export const TENANT_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The embedded store's one tenant. */
export const DEFAULT_TENANT = "default";
