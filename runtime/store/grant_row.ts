/**
 * One row of the `grants` table (migration 3 of `database.ts`, and `pg_migration_grants.ts`)
 * and how it becomes a `GrantRecord`, for both adapters: a damaged column reads as a grant
 * that redeems nothing.
 *
 * @module
 */
import { z } from "zod";
import {
  GRANT_MODES,
  type GrantMode,
  type GrantRecord,
  type GrantUse,
  USE_KINDS,
} from "./grant_store.ts";

/** A `grants` row as SQLite returns it (and as `pg_grant_store.ts` turns its rows into). */
export interface GrantRow {
  id: string;
  secret_id: string;
  agent: string;
  purpose: string;
  mode: string;
  uses: string;
  expires_at: string;
  created_at: string;
  created_by: string;
  approved_at: string | null;
  approved_by: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  revoke_reason: string | null;
  session_id: string | null;
  used_at: string | null;
  last_redeemed_at: string | null;
  redemptions: number;
}

// A capture use's workflow and output are optional here: a stored capture use without them
// still reads (and lists), but `captureUseOf()` finds no binding, so it captures nothing.
const StoredUses = z.array(z.object({
  kind: z.enum(USE_KINDS),
  allowed_origins: z.array(z.string()),
  workflow: z.string().optional(),
  output: z.string().optional(),
}));

/**
 * The record of row `r`. A damaged `uses` column matches nothing (the grant lists but never
 * redeems); an unknown mode reads as `once`.
 */
export function toGrantRecord(r: GrantRow): GrantRecord {
  const parsed = StoredUses.safeParse(safeJson(r.uses));
  // A damaged uses column matches nothing: the grant lists but never redeems.
  const uses: GrantUse[] = parsed.success
    ? parsed.data.map((u) =>
      u.kind === "capture" || u.workflow !== undefined || u.output !== undefined
        ? {
          kind: u.kind,
          allowed_origins: u.allowed_origins,
          ...(u.workflow !== undefined ? { workflow: u.workflow } : {}),
          ...(u.output !== undefined ? { output: u.output } : {}),
        }
        : { kind: u.kind, allowed_origins: u.allowed_origins }
    )
    : [];
  const mode: GrantMode = (GRANT_MODES as readonly string[]).includes(r.mode)
    ? r.mode as GrantMode
    : "once";
  return {
    id: r.id,
    secret_id: r.secret_id,
    agent: r.agent,
    purpose: r.purpose,
    mode,
    uses,
    expires_at: r.expires_at,
    created_at: r.created_at,
    created_by: r.created_by,
    approved_at: r.approved_at,
    approved_by: r.approved_by,
    revoked_at: r.revoked_at,
    revoked_by: r.revoked_by,
    revoke_reason: r.revoke_reason,
    session_id: r.session_id,
    used_at: r.used_at,
    last_redeemed_at: r.last_redeemed_at,
    redemptions: Number(r.redemptions),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
