/**
 * One row of the `grants` table (migration 3 of `runtime/store/database.ts`) and how it
 * becomes a `Grant`. Split from `grant_store.ts` so the store holds the SQL and this holds the
 * reading of a stored row (a damaged column reads as a grant that redeems nothing).
 *
 * @module
 */
import { z } from "zod";
import {
  type Grant,
  GRANT_MODES,
  type GrantMode,
  grantState,
  type GrantUse,
  USE_KINDS,
} from "./grant.ts";

/** A `grants` row as SQLite returns it. */
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
 * The grant of row `r`, its state derived at `now`. A damaged `uses` column matches nothing
 * (the grant lists but never redeems); an unknown mode reads as `once`.
 */
export function toGrant(r: GrantRow, now: number): Grant {
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
  const fields = {
    mode,
    expires_at: r.expires_at,
    approved_at: r.approved_at,
    revoked_at: r.revoked_at,
    used_at: r.used_at,
  };
  return {
    id: r.id,
    secret_id: r.secret_id,
    agent: r.agent,
    purpose: r.purpose,
    mode,
    uses,
    state: grantState(fields, now),
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
