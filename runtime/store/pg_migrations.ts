/**
 * The PostgreSQL schema as numbered migrations, run by the tables' owner (`PgDatabase.migrate`,
 * tracked in `schema_migrations`). Every table has row-level security enabled and forced,
 * keyed on `current_setting('app.tenant_id')`; the runtime's grants go to the NOLOGIN group
 * `omotai_runtime` (its login roles are members; docs/deploy.md makes them). Policies
 * `TO` the migrating role let the owner's own commands (tenants, verify, prune) see every
 * tenant; it owns the tables and could lift the policies anyway.
 *
 * The audit is append-only twice over: the runtime's group has no UPDATE, DELETE or TRUNCATE,
 * and triggers refuse them to anyone but the prune function. Its chain is checked as rows
 * arrive (each row links to its tenant's head) and the head is kept by a trigger the
 * runtime cannot bypass. What a superuser can still do (rewrite it all) the signed
 * checkpoints catch.
 *
 * Every SECURITY DEFINER function pins `search_path = pg_catalog, public, pg_temp` and names
 * its tables `public.…`, so nothing a caller creates can stand in for them; the runtime's
 * group gets no table-wide UPDATE or DELETE anywhere (a function removes agents, and only an
 * approval's outcome columns are updatable), so it cannot `LOCK` a table against every
 * tenant either. `runtime/store/pg_attack_test.ts` is the attacker's pass over all of it.
 *
 * @module
 */

import { GRANTS_MIGRATION } from "./pg_migration_grants.ts";
import { OPERATOR_SESSIONS_MIGRATION } from "./pg_migration_operator_sessions.ts";
import { QUESTIONS_MIGRATION } from "./pg_migration_questions.ts";
import { VAULT_MIGRATION } from "./pg_migration_vault.ts";
import { TENANT_LOGINS_MIGRATION } from "./pg_migration_tenant_logins.ts";
import { AUDIT_APPEND_MIGRATION } from "./pg_migration_audit_append.ts";
import { LIVE_TENANT_MIGRATION } from "./pg_migration_live_tenant.ts";
import { AUDIT_CHAIN_MIGRATION } from "./pg_migration_audit_chain.ts";
import { CAPTURE_LEASES_MIGRATION } from "./pg_migration_capture_leases.ts";

/** Migrations, in order; index + 1 is the version each leads to. */
export const PG_MIGRATIONS: readonly string[] = [
  `
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
    IF t IS NULL OR t = '' THEN
      RAISE EXCEPTION 'TENANT_UNSET: no tenant for this transaction'
        USING ERRCODE = 'insufficient_privilege';
    END IF;
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
    EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', tbl);
    EXECUTE format('ALTER TABLE public.%I FORCE ROW LEVEL SECURITY', tbl);
    EXECUTE format('CREATE POLICY %I ON public.%I TO %I USING (true) WITH CHECK (true)',
      tbl || '_owner', tbl, current_user);
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
  `,
  // Signed checkpoints of each tenant's chain (runtime/audit/checkpoint.ts): kept beside
  // the rows, append-only like them; the copy that counts is the signer's JSONL file.
  `
  CREATE TABLE audit_checkpoints (
    tenant_id text NOT NULL REFERENCES tenants(id),
    seq bigint NOT NULL,
    hash text NOT NULL,
    ts text NOT NULL,
    runtime text NOT NULL,
    key_id text NOT NULL,
    sig text NOT NULL,
    PRIMARY KEY (tenant_id, seq, runtime, ts)
  );
  CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
  CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
  SELECT tenant_rls('audit_checkpoints', 'tenant_id');
  REVOKE ALL ON audit_checkpoints FROM PUBLIC;
  GRANT SELECT, INSERT ON audit_checkpoints TO omotai_runtime;
  `,
  // Agent keys (agent_store.ts): only a key's SHA-256 is kept. A key names its tenant: the
  // one path across tenants is agent_by_key(), which answers for exactly the presented
  // key's hash and lists nothing.
  `
  CREATE TABLE agents (
    tenant_id text NOT NULL REFERENCES tenants(id),
    name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    key_hash text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    policy text,
    created_at text NOT NULL,
    PRIMARY KEY (tenant_id, name)
  );
  SELECT tenant_rls('agents', 'tenant_id');
  CREATE FUNCTION agent_by_key(hash text)
    RETURNS TABLE (tenant_id text, name text, policy text, created_at text)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      SELECT a.tenant_id, a.name, a.policy, a.created_at FROM public.agents a
      WHERE a.key_hash = hash
    $f$;
  -- Removal through a function, not a table-wide DELETE grant (which would also let the role
  -- LOCK the whole table against every tenant).
  CREATE FUNCTION agent_remove(agent_name text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH gone AS (
        DELETE FROM public.agents
        WHERE tenant_id = current_setting('app.tenant_id', true) AND name = agent_name
        RETURNING 1)
      SELECT count(*) > 0 FROM gone
    $f$;
  REVOKE ALL ON agents FROM PUBLIC;
  REVOKE EXECUTE ON FUNCTION agent_by_key(text), agent_remove(text) FROM PUBLIC;
  GRANT SELECT, INSERT ON agents TO omotai_runtime;
  GRANT EXECUTE ON FUNCTION agent_by_key(text), agent_remove(text) TO omotai_runtime;
  `,
  // Approvals shared by every runtime of a tenant (runtime/store/pg_decision_store.ts):
  // raised on one, decided on any; a decision is a conditional update, so exactly one wins.
  `
  CREATE TABLE approvals (
    tenant_id text NOT NULL REFERENCES tenants(id),
    id text NOT NULL,
    runtime text NOT NULL,
    agent text,
    session text NOT NULL,
    origin text NOT NULL,
    method text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('form', 'script')),
    request jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    state text NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'withdrawn')),
    decided_at timestamptz,
    decided_by text,
    PRIMARY KEY (tenant_id, id)
  );
  CREATE INDEX approvals_pending ON approvals (tenant_id, state, created_at);
  SELECT tenant_rls('approvals', 'tenant_id');
  -- An approval is posted pending, and only a pending one changes, once, and only its outcome.
  CREATE FUNCTION approvals_final() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, public, pg_temp AS $f$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      IF NEW.state <> 'pending' OR NEW.decided_at IS NOT NULL OR NEW.decided_by IS NOT NULL THEN
        RAISE EXCEPTION 'APPROVAL_FINAL: an approval is posted pending'
          USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END IF;
    -- The one move out of a final state, and only ever stricter: an approval whose call
    -- did not run (its audit row could not be kept) is recorded as denied by the runtime that
    -- waited, so no console lists as approved what never left the browser.
    IF OLD.state = 'approved' AND NEW.state = 'denied'
        AND NEW.decided_by = 'audit-unavailable'
        AND NEW.decided_at IS NOT DISTINCT FROM OLD.decided_at THEN
      NULL;
    ELSIF OLD.state <> 'pending' OR NEW.state = 'pending' THEN
      RAISE EXCEPTION 'APPROVAL_FINAL: a decided approval cannot change'
        USING ERRCODE = 'check_violation';
    END IF;
    IF (NEW.tenant_id, NEW.id, NEW.runtime, NEW.agent, NEW.session, NEW.origin, NEW.method,
        NEW.kind, NEW.request, NEW.created_at, NEW.expires_at)
      IS DISTINCT FROM (OLD.tenant_id, OLD.id, OLD.runtime, OLD.agent, OLD.session, OLD.origin,
        OLD.method, OLD.kind, OLD.request, OLD.created_at, OLD.expires_at) THEN
      RAISE EXCEPTION 'APPROVAL_FINAL: only the outcome of an approval changes'
        USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END $f$;
  CREATE TRIGGER approvals_final BEFORE UPDATE ON approvals
    FOR EACH ROW EXECUTE FUNCTION approvals_final();
  CREATE TRIGGER approvals_posted BEFORE INSERT ON approvals
    FOR EACH ROW EXECUTE FUNCTION approvals_final();
  REVOKE ALL ON approvals FROM PUBLIC;
  -- The outcome's columns only: no table-wide UPDATE (which would also allow LOCK TABLE).
  GRANT SELECT, INSERT ON approvals TO omotai_runtime;
  GRANT UPDATE (state, decided_at, decided_by) ON approvals TO omotai_runtime;
  `,
  // Live sessions of every runtime (runtime/store/pg_live_sessions.ts): a row per session,
  // kept fresh by its runtime's heartbeat; one whose heartbeat lapsed is shown as gone, and
  // its runtime's next start removes it. A runtime is named for show (`runtime`) and known by
  // the SHA-256 of a secret only it holds (`runtime_key`, which no runtime may read): its
  // heartbeat and sweep reach its own sessions and nobody else's.
  `
  CREATE TABLE live_sessions (
    tenant_id text NOT NULL REFERENCES tenants(id),
    id text NOT NULL,
    runtime text NOT NULL,
    runtime_key text NOT NULL CHECK (runtime_key ~ '^[0-9a-f]{64}$'),
    agent text,
    origin text,
    actions_used integer NOT NULL DEFAULT 0,
    tainted boolean NOT NULL DEFAULT false,
    isolation text NOT NULL,
    started_at timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
  );
  CREATE INDEX live_sessions_runtime ON live_sessions (runtime_key);
  SELECT tenant_rls('live_sessions', 'tenant_id');
  CREATE FUNCTION live_key(secret text) RETURNS text LANGUAGE sql IMMUTABLE AS $f$
    SELECT encode(sha256(convert_to(secret, 'UTF8')), 'hex')
  $f$;
  CREATE FUNCTION live_heartbeat(secret text) RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH beat AS (UPDATE public.live_sessions SET heartbeat_at = now()
        WHERE runtime_key = public.live_key(secret) RETURNING 1)
      SELECT count(*)::integer FROM beat
    $f$;
  CREATE FUNCTION live_sweep(secret text) RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH gone AS (DELETE FROM public.live_sessions
        WHERE runtime_key = public.live_key(secret) RETURNING 1)
      SELECT count(*)::integer FROM gone
    $f$;
  CREATE FUNCTION live_end(secret text, session_id text) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH gone AS (DELETE FROM public.live_sessions
        WHERE runtime_key = public.live_key(secret) AND id = session_id RETURNING 1)
      SELECT count(*) > 0 FROM gone
    $f$;
  CREATE FUNCTION live_update(secret text, session_id text, new_origin text, actions integer,
    is_tainted boolean) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH changed AS (UPDATE public.live_sessions
        SET origin = new_origin, actions_used = actions, tainted = is_tainted,
          heartbeat_at = now()
        WHERE runtime_key = public.live_key(secret) AND id = session_id RETURNING 1)
      SELECT count(*) > 0 FROM changed
    $f$;
  REVOKE ALL ON live_sessions FROM PUBLIC;
  REVOKE EXECUTE ON FUNCTION live_heartbeat(text), live_sweep(text), live_end(text, text),
    live_update(text, text, text, integer, boolean) FROM PUBLIC;
  GRANT SELECT (tenant_id, id, runtime, agent, origin, actions_used, tainted, isolation,
    started_at, heartbeat_at) ON live_sessions TO omotai_runtime;
  GRANT INSERT ON live_sessions TO omotai_runtime;
  GRANT EXECUTE ON FUNCTION live_key(text), live_heartbeat(text), live_sweep(text),
    live_end(text, text), live_update(text, text, text, integer, boolean) TO omotai_runtime;
  `,
  // Domain rules an operator changes while runtimes run (pg_domain_store.ts):
  // changed through two functions that notify every runtime (the payload is the tenant's
  // hash, so a listener learns only that its own tenant's rules changed, or someone's).
  `
  CREATE TABLE domain_rules (
    tenant_id text NOT NULL REFERENCES tenants(id),
    origin text NOT NULL,
    rule text NOT NULL CHECK (rule IN ('allow', 'deny')),
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, origin)
  );
  SELECT tenant_rls('domain_rules', 'tenant_id');
  CREATE FUNCTION domain_set(rule_origin text, rule_kind text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE t text := current_setting('app.tenant_id', true);
  BEGIN
    IF t IS NULL OR t = '' THEN
      RAISE EXCEPTION 'TENANT_UNSET: no tenant for this transaction'
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO public.domain_rules (tenant_id, origin, rule) VALUES (t, rule_origin, rule_kind)
      ON CONFLICT (tenant_id, origin) DO UPDATE SET rule = excluded.rule, added_at = now();
    PERFORM pg_notify('omotai_domains', encode(sha256(convert_to(t, 'UTF8')), 'hex'));
  END $f$;
  CREATE FUNCTION domain_remove(rule_origin text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE t text := current_setting('app.tenant_id', true); n integer;
  BEGIN
    DELETE FROM public.domain_rules WHERE tenant_id = t AND origin = rule_origin;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
      PERFORM pg_notify('omotai_domains', encode(sha256(convert_to(t, 'UTF8')), 'hex'));
    END IF;
    RETURN n > 0;
  END $f$;
  REVOKE ALL ON domain_rules FROM PUBLIC;
  REVOKE EXECUTE ON FUNCTION domain_set(text, text), domain_remove(text) FROM PUBLIC;
  GRANT SELECT ON domain_rules TO omotai_runtime;
  GRANT EXECUTE ON FUNCTION domain_set(text, text), domain_remove(text) TO omotai_runtime;
  `,
  // A console on any runtime ends a session another runtime holds: it marks the row
  // (`live_kill`, for its own tenant only), and the holding runtime, which reads its marked
  // sessions with every heartbeat (`live_killed`, its own only), ends them.
  `
  ALTER TABLE live_sessions ADD COLUMN kill_requested_at timestamptz;
  CREATE FUNCTION live_kill(session_id text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE t text := current_setting('app.tenant_id', true); n integer;
  BEGIN
    IF t IS NULL OR t = '' THEN
      RAISE EXCEPTION 'TENANT_UNSET: no tenant for this transaction'
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    UPDATE public.live_sessions SET kill_requested_at = now()
      WHERE tenant_id = t AND id = session_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n > 0;
  END $f$;
  CREATE FUNCTION live_killed(secret text) RETURNS SETOF text
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      SELECT id FROM public.live_sessions
      WHERE runtime_key = public.live_key(secret) AND kill_requested_at IS NOT NULL
    $f$;
  REVOKE EXECUTE ON FUNCTION live_kill(text), live_killed(text) FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION live_kill(text), live_killed(text) TO omotai_runtime;
  `,
  // Each tenant's admin token (the console's and /api's credential on every runtime of the
  // tenant), as its SHA-256 only: set by the owner (`omotai tenant add`, `omotai tenant
  // token`), read by the tenant's runtimes under its row-level security, so an admin token
  // opens exactly one tenant's console.
  `
  CREATE TABLE tenant_admins (
    tenant_id text PRIMARY KEY REFERENCES tenants(id),
    token_hash text NOT NULL CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    set_at timestamptz NOT NULL DEFAULT now()
  );
  SELECT tenant_rls('tenant_admins', 'tenant_id');
  REVOKE ALL ON tenant_admins FROM PUBLIC;
  GRANT SELECT ON tenant_admins TO omotai_runtime;
  `,
  GRANTS_MIGRATION,
  VAULT_MIGRATION,
  QUESTIONS_MIGRATION,
  OPERATOR_SESSIONS_MIGRATION,
  TENANT_LOGINS_MIGRATION,
  AUDIT_APPEND_MIGRATION,
  LIVE_TENANT_MIGRATION,
  AUDIT_CHAIN_MIGRATION,
  CAPTURE_LEASES_MIGRATION,
];
