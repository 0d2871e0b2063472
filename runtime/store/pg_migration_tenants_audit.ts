/**
 * The shared store's first migration: tenants and their audit chain, one numbered step of
 * `PG_MIGRATIONS` (`pg_migrations.ts`), kept in its own file.
 *
 * `tenants`, `audit_events` (append-only: triggers refuse UPDATE, DELETE and TRUNCATE to
 * anyone but `audit_prune`), `audit_heads` (each tenant's chain head, moved by the
 * `audit_link` trigger the runtime cannot bypass) and `audit_retention`; `tenant_rls`, which
 * every later migration calls to put a table of tenant rows under forced row-level security;
 * and the runtime group's grants on them. Applied databases ran this text: it never changes.
 *
 * @module
 */

import { RLS_FORCED_OWNER_SEES_ALL, TENANT_UNSET_GUARD } from "./pg_sql.ts";

/** Migration 1: tenants, the audit chain and `tenant_rls`. */
export const TENANTS_AUDIT_MIGRATION: string = `
  CREATE TABLE tenants (
    id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    created_at timestamptz NOT NULL DEFAULT now()
  );

  CREATE TABLE audit_events (
    tenant_id text NOT NULL REFERENCES tenants(id),
    seq bigint NOT NULL CHECK (seq > 0),
    ts text NOT NULL,
    session text,
    agent text,
    kind text NOT NULL,
    source text NOT NULL,
    origin text,
    method text,
    decision text NOT NULL,
    reason text,
    module text,
    rule text,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    PRIMARY KEY (tenant_id, seq)
  );
  CREATE INDEX audit_events_ts ON audit_events (tenant_id, ts);

  -- One row per tenant: its chain's head (kept by a trigger) and, after a prune, the
  -- anchor the remaining rows chain from.
  CREATE TABLE audit_heads (
    tenant_id text PRIMARY KEY REFERENCES tenants(id),
    head_seq bigint NOT NULL,
    head_hash text NOT NULL,
    anchor_seq bigint NOT NULL,
    anchor_hash text NOT NULL
  );

  -- How long the runtime's prune must keep rows, per tenant (the owner may change it).
  CREATE TABLE audit_retention (
    tenant_id text PRIMARY KEY REFERENCES tenants(id),
    days integer NOT NULL CHECK (days >= 1)
  );

  -- Where a tenant's chain starts: bound to the tenant, so rows moved to another tenant
  -- do not link.
  CREATE FUNCTION audit_genesis(tenant text) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
    SELECT encode(sha256(convert_to('omotai-audit-genesis' || chr(10) || tenant, 'UTF8')), 'hex')
  $f$;

  CREATE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $f$
  BEGIN
    IF TG_OP = 'DELETE' AND current_setting('omotai.pruning', true) = 'on' THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'AUDIT_APPEND_ONLY: audit rows cannot be changed or removed'
      USING ERRCODE = 'insufficient_privilege';
  END $f$;
  CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
  CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();

  -- A row must continue its tenant's chain; the head moves with it. Runs as the owner:
  -- the runtime cannot write the head itself.
  CREATE FUNCTION audit_link() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE h record;
  BEGIN
    SELECT head_seq, head_hash INTO h FROM public.audit_heads WHERE tenant_id = NEW.tenant_id
      FOR UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'TENANT_UNKNOWN: no such tenant' USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF NEW.seq <> h.head_seq + 1 OR NEW.prev_hash <> h.head_hash THEN
      RAISE EXCEPTION 'AUDIT_CHAIN_BROKEN: a row must continue its tenant''s chain'
        USING ERRCODE = 'check_violation';
    END IF;
    UPDATE public.audit_heads SET head_seq = NEW.seq, head_hash = NEW.hash
      WHERE tenant_id = NEW.tenant_id;
    RETURN NEW;
  END $f$;
  CREATE TRIGGER audit_events_link BEFORE INSERT ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_link();
  -- Before it (triggers fire by name), with the caller's rights: a row of a tenant the caller
  -- cannot see is refused the same way whether that tenant exists or not, and audit_link
  -- never runs (or locks a head) for it.
  CREATE FUNCTION audit_tenant_visible() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, public, pg_temp AS $f$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM public.tenants WHERE id = NEW.tenant_id) THEN
      RAISE EXCEPTION 'TENANT_UNKNOWN: no such tenant' USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
  END $f$;
  CREATE TRIGGER audit_events_a_tenant BEFORE INSERT ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_tenant_visible();

  -- Appends of one tenant take turns on its head row (not an advisory lock: those are open to
  -- every role, and another tenant's could be held to stall this one).
  CREATE FUNCTION audit_lock_head() RETURNS TABLE (head_seq bigint, head_hash text)
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      SELECT h.head_seq, h.head_hash FROM public.audit_heads h
      WHERE h.tenant_id = current_setting('app.tenant_id', true) FOR UPDATE
    $f$;

  -- A tenant is made with its chain's head at its genesis.
  CREATE FUNCTION tenant_heads() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, public, pg_temp AS $f$
  BEGIN
    INSERT INTO public.audit_heads
      VALUES (NEW.id, 0, public.audit_genesis(NEW.id), 1, public.audit_genesis(NEW.id));
    INSERT INTO public.audit_retention VALUES (NEW.id, 90);
    RETURN NEW;
  END $f$;
  CREATE TRIGGER tenants_heads AFTER INSERT ON tenants
    FOR EACH ROW EXECUTE FUNCTION tenant_heads();

  -- The only way rows leave: the oldest ones of the caller's tenant, older than its
  -- retention, with the anchor moved so the rest still verify. The runtime may call it; it
  -- cannot make it remove anything younger.
  CREATE FUNCTION audit_prune(cutoff timestamptz) RETURNS TABLE (removed bigint, anchor_seq bigint)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE
    t text := current_setting('app.tenant_id', true);
    keep_days integer;
    h record;
    keep_seq bigint;
    keep_prev text;
    n bigint;
  BEGIN
${TENANT_UNSET_GUARD}
    SELECT days INTO keep_days FROM public.audit_retention WHERE tenant_id = t;
    -- Never younger than the retention, never before 2000: NULL, -infinity and BC dates (whose
    -- text sorts after this century's) all become the floor, which removes nothing young.
    cutoff := least(
      greatest(cutoff, timestamptz '2000-01-01 00:00:00+00'),
      now() - make_interval(days => greatest(coalesce(keep_days, 90), 1)));
    SELECT * INTO h FROM public.audit_heads WHERE tenant_id = t FOR UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'TENANT_UNKNOWN: no such tenant' USING ERRCODE = 'foreign_key_violation';
    END IF;
    SELECT seq, prev_hash INTO keep_seq, keep_prev FROM public.audit_events
      WHERE tenant_id = t
        AND ts >= to_char(cutoff AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      ORDER BY seq LIMIT 1;
    IF NOT FOUND THEN
      keep_seq := h.head_seq + 1;
      keep_prev := h.head_hash;
    END IF;
    PERFORM set_config('omotai.pruning', 'on', true);
    DELETE FROM public.audit_events WHERE tenant_id = t AND seq < keep_seq;
    GET DIAGNOSTICS n = ROW_COUNT;
    PERFORM set_config('omotai.pruning', 'off', true);
    UPDATE public.audit_heads SET anchor_seq = keep_seq, anchor_hash = keep_prev
      WHERE tenant_id = t;
    RETURN QUERY SELECT n, keep_seq;
  END $f$;

  -- Every table of a tenant's rows: row-level security enabled and forced; the owner (the
  -- migrating role) sees every tenant, the runtime's group only app.tenant_id's rows.
  CREATE FUNCTION tenant_rls(tbl text, col text) RETURNS void LANGUAGE plpgsql AS $f$
  BEGIN
${RLS_FORCED_OWNER_SEES_ALL}
    EXECUTE format(
      'CREATE POLICY %I ON public.%I TO omotai_runtime '
      || 'USING (%I = current_setting(''app.tenant_id'', true)) '
      || 'WITH CHECK (%I = current_setting(''app.tenant_id'', true))',
      tbl || '_own', tbl, col, col);
  END $f$;
  REVOKE EXECUTE ON FUNCTION tenant_rls(text, text) FROM PUBLIC;
  SELECT tenant_rls('tenants', 'id');
  SELECT tenant_rls('audit_events', 'tenant_id');
  SELECT tenant_rls('audit_heads', 'tenant_id');
  SELECT tenant_rls('audit_retention', 'tenant_id');

  REVOKE ALL ON tenants, audit_events, audit_heads, audit_retention FROM PUBLIC;
  REVOKE EXECUTE ON FUNCTION audit_prune(timestamptz), audit_link(), tenant_heads(),
    audit_lock_head() FROM PUBLIC;
  GRANT USAGE ON SCHEMA public TO omotai_runtime;
  GRANT SELECT ON tenants, audit_heads, audit_retention TO omotai_runtime;
  GRANT SELECT, INSERT ON audit_events TO omotai_runtime;
  GRANT EXECUTE ON FUNCTION audit_prune(timestamptz), audit_genesis(text), audit_lock_head()
    TO omotai_runtime;
  `;
