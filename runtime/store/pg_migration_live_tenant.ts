/**
 * The shared store's migration that binds a runtime's own live-session rows to the tenant of
 * the transaction: one numbered step of `PG_MIGRATIONS` (`pg_migrations.ts`), kept in its own
 * file.
 *
 * `live_update` and `live_end` found a row by the runtime's secret and the session id only, so
 * an update or an end made for one tenant also reached a row of the same id that the same
 * runtime held for another. Each now also requires the row's tenant to be the transaction's
 * (`app_tenant()`, which honours a bound login).
 *
 * @module
 */

/** The SQL of the step (run by the owner, in one transaction). */
export const LIVE_TENANT_MIGRATION = `
  CREATE OR REPLACE FUNCTION live_end(secret text, session_id text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH gone AS (DELETE FROM public.live_sessions
        WHERE runtime_key = public.live_key(secret) AND id = session_id
          AND tenant_id = public.app_tenant() RETURNING 1)
      SELECT count(*) > 0 FROM gone
    $f$;
  CREATE OR REPLACE FUNCTION live_update(secret text, session_id text, new_origin text,
    actions integer, is_tainted boolean) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH changed AS (UPDATE public.live_sessions
        SET origin = new_origin, actions_used = actions, tainted = is_tainted,
          heartbeat_at = now()
        WHERE runtime_key = public.live_key(secret) AND id = session_id
          AND tenant_id = public.app_tenant() RETURNING 1)
      SELECT count(*) > 0 FROM changed
    $f$;
`;
