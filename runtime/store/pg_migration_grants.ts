/**
 * The shared store's migration for the grants: one numbered step of `PG_MIGRATIONS`
 * (`pg_migrations.ts`), kept in its own file.
 *
 * `grants` mirrors the SQLite table (migration 3 of `database.ts`) with the tenant's id, times
 * as `timestamptz`, `uses` as `jsonb`, and `inserted_at` (the database's clock, for the order
 * of grants added in the same millisecond, as SQLite's rowid); a capture grant's row holds its
 * one capture use (origins, workflow, output) and mode `once`. No foreign key to the vault:
 * as in SQLite, removing a secret revokes its grants in code and at redemption. Rows are
 * revoked, never deleted.
 *
 * The runtime's group (`pg_grant_store.ts`; the console and API add, approve
 * and revoke through it) may read its tenant's grants, insert the columns of a new grant
 * only (never one born revoked, used, bound or counted), and update only the columns an
 * approval, a revocation or a redemption changes: no table-wide UPDATE, no DELETE. A trigger
 * refuses what no runtime may do with those: revive or change a revoked grant, unapprove or
 * re-approve, unbind or rebind a session grant, unuse a used one, count other than one
 * redemption at a time, or redeem a pending, revoked or used `once` grant. Its refusals are
 * `GRANT_FINAL: …`.
 *
 * @module
 */

import { rowGuard } from "./pg_sql.ts";

/** The SQL of the step (run by the owner, in one transaction). */
export const GRANTS_MIGRATION = `
  CREATE TABLE grants (
    tenant_id text NOT NULL REFERENCES tenants(id),
    id text NOT NULL CHECK (id ~ '^g_[a-z2-7]{16}$'),
    secret_id text NOT NULL CHECK (secret_id ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    agent text NOT NULL CHECK (agent ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    purpose text NOT NULL CHECK (char_length(purpose) BETWEEN 1 AND 200),
    mode text NOT NULL CHECK (mode IN ('once', 'session', 'standing')),
    uses jsonb NOT NULL CHECK (jsonb_typeof(uses) = 'array'),
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text NOT NULL,
    approved_at timestamptz,
    approved_by text,
    revoked_at timestamptz,
    revoked_by text,
    revoke_reason text,
    session_id text,
    used_at timestamptz,
    last_redeemed_at timestamptz,
    redemptions integer NOT NULL DEFAULT 0 CHECK (redemptions >= 0),
    inserted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tenant_id, id),
    CHECK ((approved_at IS NULL) = (approved_by IS NULL)),
    CHECK ((revoked_at IS NULL) = (revoked_by IS NULL)
      AND (revoked_at IS NULL) = (revoke_reason IS NULL)),
    CHECK (session_id IS NULL OR mode = 'session'),
    CHECK ((used_at IS NULL) = (redemptions = 0)),
    CHECK (mode <> 'once' OR redemptions <= 1),
    -- A capture grant (runtime/grants/capture_checks.ts) has one use, the capture, and is once.
    CHECK (NOT uses @> '[{"kind": "capture"}]'
      OR (jsonb_array_length(uses) = 1 AND mode = 'once'))
  );
  CREATE INDEX grants_secret ON grants (tenant_id, secret_id);
  CREATE INDEX grants_agent ON grants (tenant_id, agent);
  SELECT tenant_rls('grants', 'tenant_id');

  -- What a grant's row may become: see the header of pg_migration_grants.ts.
${
  rowGuard({
    fn: "grants_guard",
    table: "grants",
    body: `
    IF (NEW.tenant_id, NEW.id, NEW.secret_id, NEW.agent, NEW.purpose, NEW.mode, NEW.uses,
        NEW.expires_at, NEW.created_at, NEW.created_by, NEW.inserted_at)
      IS DISTINCT FROM (OLD.tenant_id, OLD.id, OLD.secret_id, OLD.agent, OLD.purpose,
        OLD.mode, OLD.uses, OLD.expires_at, OLD.created_at, OLD.created_by, OLD.inserted_at) THEN
      RAISE EXCEPTION 'GRANT_FINAL: only the approval, revocation and redemptions of a grant change'
        USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.revoked_at IS NOT NULL THEN
      RAISE EXCEPTION 'GRANT_FINAL: a revoked grant cannot change'
        USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.approved_at IS NOT NULL
      AND (NEW.approved_at, NEW.approved_by) IS DISTINCT FROM (OLD.approved_at, OLD.approved_by)
    THEN
      RAISE EXCEPTION 'GRANT_FINAL: an approval cannot be undone or redone'
        USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.redemptions = OLD.redemptions + 1 THEN
      IF OLD.approved_at IS NULL OR NEW.revoked_at IS NOT NULL
        OR (OLD.mode = 'once' AND OLD.used_at IS NOT NULL)
        OR NEW.used_at IS DISTINCT FROM coalesce(OLD.used_at, NEW.used_at)
        OR NEW.last_redeemed_at IS NULL
        OR (OLD.mode = 'session' AND (NEW.session_id IS NULL
          OR NEW.session_id IS DISTINCT FROM coalesce(OLD.session_id, NEW.session_id))) THEN
        RAISE EXCEPTION 'GRANT_FINAL: only an approved, live grant is redeemed, within its mode'
          USING ERRCODE = 'check_violation';
      END IF;
    ELSIF NEW.redemptions <> OLD.redemptions
      OR (NEW.session_id, NEW.used_at, NEW.last_redeemed_at)
        IS DISTINCT FROM (OLD.session_id, OLD.used_at, OLD.last_redeemed_at) THEN
      RAISE EXCEPTION 'GRANT_FINAL: redemptions are counted one at a time and never undone'
        USING ERRCODE = 'check_violation';
    END IF;`,
  })
}

  REVOKE ALL ON grants FROM PUBLIC;
  GRANT SELECT ON grants TO omotai_runtime;
  -- A new grant's own columns only: revocation, binding, use and counts start empty.
  GRANT INSERT (tenant_id, id, secret_id, agent, purpose, mode, uses, expires_at, created_at,
    created_by, approved_at, approved_by) ON grants TO omotai_runtime;
  -- The columns an approval, a revocation or a redemption changes: no table-wide UPDATE
  -- (which would also allow LOCK TABLE against every tenant), no DELETE.
  GRANT UPDATE (approved_at, approved_by, revoked_at, revoked_by, revoke_reason, session_id,
    used_at, last_redeemed_at, redemptions) ON grants TO omotai_runtime;
`;
