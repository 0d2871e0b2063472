/**
 * The shared store's migration that binds a runtime's own live-session rows to the tenant of
 * the transaction: one numbered step of `PG_MIGRATIONS` (`pg_migrations.ts`), kept in its own
 * file.
 *
 * `live_update` and `live_end` found a row by the runtime's secret and the session id only, so
 * an update or an end made for one tenant also reached a row of the same id that the same
 * runtime held for another. Each now also requires the row's tenant to be the transaction's
 * (`app_tenant()`, which honours a bound login). The runtime-wide ones (`live_heartbeat`,
 * `live_killed`, `live_sweep`, which name no tenant) reach only the bound tenant's rows for a
 * login bound to one: a runtime secret reused across tenants (a data directory moved) no
 * longer reaches the other tenant's rows through a bound login.
 *
 * @module
 */

/** The SQL of the step (run by the owner, in one transaction). */
export const LIVE_TENANT_MIGRATION = `
  -- Whether a row of tenant row_tenant is the session's login's to reach: every tenant's for
  -- an unbound login (it names its tenant per transaction), only its own for a bound one.
  CREATE FUNCTION live_reachable(row_tenant text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      SELECT NOT EXISTS (SELECT 1 FROM public.tenant_logins l WHERE l.role = session_user)
        OR row_tenant = (SELECT l.tenant_id FROM public.tenant_logins l
          WHERE l.role = session_user)
    $f$;
  REVOKE EXECUTE ON FUNCTION live_reachable(text) FROM PUBLIC;
  CREATE OR REPLACE FUNCTION live_heartbeat(secret text) RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH beat AS (UPDATE public.live_sessions SET heartbeat_at = now()
        WHERE runtime_key = public.live_key(secret) AND public.live_reachable(tenant_id)
        RETURNING 1)
      SELECT count(*)::integer FROM beat
    $f$;
  CREATE OR REPLACE FUNCTION live_sweep(secret text) RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH gone AS (DELETE FROM public.live_sessions
        WHERE runtime_key = public.live_key(secret) AND public.live_reachable(tenant_id)
        RETURNING 1)
      SELECT count(*)::integer FROM gone
    $f$;
  CREATE OR REPLACE FUNCTION live_killed(secret text) RETURNS SETOF text
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      SELECT id FROM public.live_sessions
      WHERE runtime_key = public.live_key(secret) AND kill_requested_at IS NOT NULL
        AND public.live_reachable(tenant_id)
    $f$;
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
