/**
 * The shared store's migration for the operator sessions: one numbered step of `PG_MIGRATIONS`
 * (`pg_migrations.ts`), kept in its own file.
 *
 * @module
 */

/** The SQL of the step (run by the owner, in one transaction). */
export const OPERATOR_SESSIONS_MIGRATION = `
  SELECT 1;
`;
