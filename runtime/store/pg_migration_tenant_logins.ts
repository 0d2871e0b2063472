/**
 * The shared store's migration that binds database logins to tenants: against a compromised
 * runtime. Row-level security keyed on `app.tenant_id` alone keeps an honest runtime to its
 * tenant, but any login may name any tenant there. Once the owner binds a login to a tenant
 * (`omotai tenant bind ID ROLE`, a row in `tenant_logins`, which no runtime may read or
 * write), `app_tenant()` answers that tenant for it and nothing else: naming another tenant
 * makes it see and change nothing at all. Every policy and function that read
 * `current_setting('app.tenant_id')` reads `app_tenant()` from here on (rewritten in place,
 * so the grants on them stay). A login nobody bound keeps the earlier behaviour.
 *
 * @module
 */

import { RLS_FORCED_OWNER_SEES_ALL } from "./pg_sql.ts";

/** The SQL of the step (run by the owner, in one transaction). */
export const TENANT_LOGINS_MIGRATION = `
  CREATE TABLE tenant_logins (
    role name PRIMARY KEY,
    tenant_id text NOT NULL REFERENCES tenants(id)
  );
  REVOKE ALL ON tenant_logins FROM PUBLIC;

  -- The tenant this transaction acts for: a bound login's own (and only when it names it),
  -- an unbound login's app.tenant_id. session_user is the login itself: SET ROLE and
  -- SECURITY DEFINER do not change it, and SET SESSION AUTHORIZATION is a superuser's.
  -- PL/pgSQL: its one query's plan is kept for the session (a SQL function would be planned
  -- at every call, and this runs at every statement a policy looks at).
  CREATE FUNCTION app_tenant() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE
    named text := current_setting('app.tenant_id', true);
    bound text;
  BEGIN
    SELECT l.tenant_id INTO bound FROM public.tenant_logins l WHERE l.role = session_user;
    IF NOT FOUND THEN
      RETURN named;
    END IF;
    RETURN CASE WHEN bound = named THEN bound END;
  END $f$;
  REVOKE EXECUTE ON FUNCTION app_tenant() FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION app_tenant() TO omotai_runtime;

  -- Tables made by later steps get policies on app_tenant() too.
  CREATE OR REPLACE FUNCTION tenant_rls(tbl text, col text) RETURNS void LANGUAGE plpgsql AS $f$
  BEGIN
${RLS_FORCED_OWNER_SEES_ALL}
    EXECUTE format(
      'CREATE POLICY %I ON public.%I TO omotai_runtime '
      || 'USING (%I = public.app_tenant()) WITH CHECK (%I = public.app_tenant())',
      tbl || '_own', tbl, col, col);
  END $f$;
  REVOKE EXECUTE ON FUNCTION tenant_rls(text, text) FROM PUBLIC;

  -- Called as is, not as an init plan (SELECT app_tenant()): a stable call is what the planner
  -- makes the index condition, so a policy filters inside the index scan and EXPLAIN's
  -- "Rows Removed by Filter" counts nothing of another tenant (pg_attack_test's oracle).
  DO $do$
  DECLARE
    r record;
    pattern constant text := 'current_setting\\(''app\\.tenant_id''(::text)?, true\\)';
  BEGIN
    FOR r IN
      SELECT tablename, policyname, qual, with_check FROM pg_policies
      WHERE schemaname = 'public'
        AND (qual ~ pattern OR with_check ~ pattern)
    LOOP
      EXECUTE format('ALTER POLICY %I ON public.%I USING (%s)%s', r.policyname, r.tablename,
        regexp_replace(r.qual, pattern, 'public.app_tenant()', 'g'),
        CASE WHEN r.with_check IS NULL THEN ''
          ELSE format(' WITH CHECK (%s)',
            regexp_replace(r.with_check, pattern, 'public.app_tenant()', 'g')) END);
    END LOOP;
    FOR r IN
      SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.proname NOT IN ('app_tenant', 'tenant_rls')
        AND p.prosrc ~ pattern
    LOOP
      EXECUTE regexp_replace(pg_get_functiondef(r.oid), pattern, 'public.app_tenant()',
        'g');
    END LOOP;
  END $do$;

  -- The head every audit append locks, in PL/pgSQL: its plan kept for the session, where a
  -- SQL function is planned at each call (the runtime's hottest path).
  CREATE OR REPLACE FUNCTION audit_lock_head() RETURNS TABLE (head_seq bigint, head_hash text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  BEGIN
    RETURN QUERY SELECT h.head_seq, h.head_hash FROM public.audit_heads h
      WHERE h.tenant_id = public.app_tenant() FOR UPDATE;
  END $f$;
`;
