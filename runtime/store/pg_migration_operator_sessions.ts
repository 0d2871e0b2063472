/**
 * The shared store's migration for the operator sessions: one numbered step of `PG_MIGRATIONS`
 * (`pg_migrations.ts`), kept in its own file.
 *
 * The console's login sessions of every runtime of a tenant (`pg_operator_sessions.ts`): a row
 * per session, known by the SHA-256 of its id only (the id itself, the cookie's value, never
 * reaches the database, and the CSRF token is derived from the id, so neither can be read
 * back). The runtime's group has no privilege on the table at all: four SECURITY DEFINER
 * functions start, touch, check and end a session of the transaction's tenant
 * (`app.tenant_id`), all on the database's clock, and starting one bounds the tenant's count
 * (the least recently used go first) and removes its idle ones. No table-wide DELETE or UPDATE
 * grant, so no `LOCK TABLE` against every tenant either.
 *
 * @module
 */

import { TENANT_UNSET_GUARD } from "./pg_sql.ts";

/** The SQL of the step (run by the owner, in one transaction). */
export const OPERATOR_SESSIONS_MIGRATION = `
  CREATE TABLE operator_sessions (
    tenant_id text NOT NULL REFERENCES tenants(id),
    id_hash text NOT NULL CHECK (id_hash ~ '^[0-9a-f]{64}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id_hash)
  );
  CREATE INDEX operator_sessions_last_seen ON operator_sessions (tenant_id, last_seen);
  SELECT tenant_rls('operator_sessions', 'tenant_id');

  -- Starts a session of the transaction's tenant: removes its idle ones, then all but the
  -- max_sessions (1 to 1000) most recently used, never the new one. Returns the start (ms).
  CREATE FUNCTION operator_session_start(session_hash text, idle_ms bigint,
    max_sessions integer) RETURNS double precision
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE t text := current_setting('app.tenant_id', true);
  BEGIN
${TENANT_UNSET_GUARD}
    DELETE FROM public.operator_sessions WHERE tenant_id = t
      AND last_seen < now() - greatest(idle_ms, 1) * interval '1 millisecond';
    INSERT INTO public.operator_sessions (tenant_id, id_hash, created_at, last_seen)
      VALUES (t, session_hash, now(), now());
    DELETE FROM public.operator_sessions WHERE tenant_id = t AND id_hash NOT IN (
      SELECT s.id_hash FROM public.operator_sessions s WHERE s.tenant_id = t
      ORDER BY s.id_hash = session_hash DESC, s.last_seen DESC, s.created_at DESC
      LIMIT least(greatest(max_sessions, 1), 1000));
    RETURN extract(epoch FROM now()) * 1000;
  END $f$;

  -- The live session of the tenant with this hash, its idle clock restarted: its new last use
  -- (ms), or NULL when there is none; an idle one is removed.
  CREATE FUNCTION operator_session_touch(session_hash text, idle_ms bigint)
    RETURNS double precision
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE t text := current_setting('app.tenant_id', true); seen double precision;
  BEGIN
    UPDATE public.operator_sessions SET last_seen = greatest(last_seen, now())
      WHERE tenant_id = t AND id_hash = session_hash
        AND last_seen >= now() - greatest(idle_ms, 1) * interval '1 millisecond'
      RETURNING extract(epoch FROM last_seen) * 1000 INTO seen;
    IF NOT FOUND THEN
      DELETE FROM public.operator_sessions WHERE tenant_id = t AND id_hash = session_hash;
    END IF;
    RETURN seen;
  END $f$;

  -- Whether the tenant's session with this hash is live, without counting it as use.
  CREATE FUNCTION operator_session_alive(session_hash text, idle_ms bigint) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      SELECT EXISTS (SELECT 1 FROM public.operator_sessions
        WHERE tenant_id = current_setting('app.tenant_id', true) AND id_hash = session_hash
          AND last_seen >= now() - greatest(idle_ms, 1) * interval '1 millisecond')
    $f$;

  -- Ends the tenant's session with this hash (logout); true when there was one.
  CREATE FUNCTION operator_session_end(session_hash text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH gone AS (DELETE FROM public.operator_sessions
        WHERE tenant_id = current_setting('app.tenant_id', true) AND id_hash = session_hash
        RETURNING 1)
      SELECT count(*) > 0 FROM gone
    $f$;

  REVOKE ALL ON operator_sessions FROM PUBLIC;
  REVOKE EXECUTE ON FUNCTION operator_session_start(text, bigint, integer),
    operator_session_touch(text, bigint), operator_session_alive(text, bigint),
    operator_session_end(text) FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION operator_session_start(text, bigint, integer),
    operator_session_touch(text, bigint), operator_session_alive(text, bigint),
    operator_session_end(text) TO omotai_runtime;
`;
