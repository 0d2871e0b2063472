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
import { TENANTS_AUDIT_MIGRATION } from "./pg_migration_tenants_audit.ts";
import { OPERATOR_SESSIONS_MIGRATION } from "./pg_migration_operator_sessions.ts";
import { QUESTIONS_MIGRATION } from "./pg_migration_questions.ts";
import { VAULT_MIGRATION } from "./pg_migration_vault.ts";
import { TENANT_LOGINS_MIGRATION } from "./pg_migration_tenant_logins.ts";
import { AUDIT_APPEND_MIGRATION } from "./pg_migration_audit_append.ts";
import { LIVE_TENANT_MIGRATION } from "./pg_migration_live_tenant.ts";
import { AUDIT_CHAIN_MIGRATION } from "./pg_migration_audit_chain.ts";
import { CAPTURE_LEASES_MIGRATION } from "./pg_migration_capture_leases.ts";
import { rowGuard, TENANT_UNSET_GUARD } from "./pg_sql.ts";

/** Migrations, in order; index + 1 is the version each leads to. */
export const PG_MIGRATIONS: readonly string[] = [
  TENANTS_AUDIT_MIGRATION,
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
${
    rowGuard({
      fn: "approvals_final",
      table: "approvals",
      insertTrigger: "approvals_posted",
      body: `
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
    END IF;`,
    })
  }
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
${TENANT_UNSET_GUARD}
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
${TENANT_UNSET_GUARD}
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
