/**
 * Approvals shared by every runtime of a tenant, in PostgreSQL (`approvals`, under row-level
 * security): one runtime posts the approval its agent's call waits on; the operator decides
 * it on any runtime's console or API; the posting runtime hears of the decision within a
 * second (`LISTEN`/`NOTIFY`, and a poll behind it in case a notification is lost).
 *
 * Every change of state is one conditional update (`WHERE state = 'pending'`, and for a
 * decision `AND expires_at > now()`): of an approve on one runtime, a deny on another and
 * the poster's own timeout, exactly one wins, and the others learn they lost (`not_pending`,
 * which the API answers 409). A trigger keeps a decided row decided and lets nothing but its
 * outcome change. Notifications carry the approval's random id only: a listener of another
 * tenant learns nothing it could read.
 *
 * @module
 */
import { log } from "../log.ts";
import { parseRequestView } from "../net/request_view_schema.ts";
import { BoardSignals } from "./board_signals.ts";
import type { PgDatabase } from "../store/pg_database.ts";
import type { Approval, ApprovalDecision, ApprovalState, DecideResult } from "./approval_queue.ts";

/** The channel every runtime listens on. */
export const APPROVALS_CHANNEL = "omotai_approvals";

/** How often a waiting runtime looks, in case a notification was lost (default). */
export const BOARD_POLL_MS = 500;

interface Row {
  id: string;
  agent: string | null;
  session: string;
  origin: string;
  method: string;
  kind: "form" | "script";
  request: unknown;
  created_at: Date;
  expires_at: Date;
  state: ApprovalState;
  decided_at: Date | null;
  decided_by: string | null;
}

/** One tenant's approvals, as one runtime sees and changes them. */
export class PgApprovalBoard implements AsyncDisposable {
  readonly tenant: string;
  readonly #db: PgDatabase;
  readonly #runtime: string;
  readonly #signals: BoardSignals;
  #unlisten: (() => Promise<void>) | undefined;

  private constructor(db: PgDatabase, tenant: string, runtime: string, pollMs: number) {
    this.#db = db;
    this.tenant = tenant;
    this.#runtime = runtime;
    this.#signals = new BoardSignals("approvals", pollMs);
  }

  /** A board for `tenant`, listening for changes made by any runtime. */
  static async open(
    db: PgDatabase,
    tenant: string,
    options: { runtime: string; pollMs?: number },
  ): Promise<PgApprovalBoard> {
    const board = new PgApprovalBoard(db, tenant, options.runtime, options.pollMs ?? BOARD_POLL_MS);
    board.#unlisten = await db.listen(APPROVALS_CHANNEL, (id) => board.#notified(id));
    return board;
  }

  /** Posts a pending approval (`record.state` must be `pending`). */
  async post(record: Approval): Promise<void> {
    await this.#db.tenant(this.tenant, async (tx) => {
      await tx`INSERT INTO approvals (tenant_id, id, runtime, agent, session, origin, method,
          kind, request, created_at, expires_at, state)
        VALUES (${this.tenant}, ${record.id}, ${this.#runtime}, ${record.agent},
          ${record.session}, ${record.origin}, ${record.method}, ${record.kind},
          ${tx.json(JSON.parse(JSON.stringify(record.request)))}, ${record.created_at},
          ${record.expires_at}, 'pending')`;
      await tx`SELECT pg_notify(${APPROVALS_CHANNEL}, ${record.id})`;
    });
  }

  /**
   * The operator's decision on `id`: `ok` when it won, `not_pending` when the approval was
   * already decided, expired or withdrawn (or its time ran out), `unknown` when this tenant
   * has none.
   */
  async decide(id: string, decision: ApprovalDecision, by: string): Promise<DecideResult> {
    const state = decision === "approve" ? "approved" : "denied";
    return await this.#db.tenant(this.tenant, async (tx) => {
      const won = await tx`UPDATE approvals
        SET state = ${state}, decided_at = now(), decided_by = ${by.slice(0, 40)}
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'pending'
          AND expires_at > now()
        RETURNING id`;
      if (won.length > 0) {
        await tx`SELECT pg_notify(${APPROVALS_CHANNEL}, ${id})`;
        return "ok";
      }
      const found = await tx`SELECT 1 FROM approvals WHERE tenant_id = ${this.tenant}
        AND id = ${id}`;
      return found.length > 0 ? "not_pending" : "unknown";
    });
  }

  /**
   * Ends a pending approval as `expired` or `withdrawn` (the poster's timeout, its agent's
   * call gone); true when that won over any decision.
   */
  async finish(id: string, state: "expired" | "withdrawn"): Promise<boolean> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const won = await tx`UPDATE approvals SET state = ${state}, decided_at = now()
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'pending' RETURNING id`;
      if (won.length > 0) await tx`SELECT pg_notify(${APPROVALS_CHANNEL}, ${id})`;
      return won.length > 0;
    });
  }

  /**
   * Records an approved `id` as denied because its call did not run (the waiting runtime
   * could not keep its audit row): the board then says what happened. True when it changed.
   */
  async unrun(id: string): Promise<boolean> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const changed = await tx`UPDATE approvals SET state = 'denied',
          decided_by = 'audit-unavailable'
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'approved' RETURNING id`;
      if (changed.length > 0) await tx`SELECT pg_notify(${APPROVALS_CHANNEL}, ${id})`;
      return changed.length > 0;
    });
  }

  /** Approval `id` of this tenant, or undefined. */
  async get(id: string): Promise<Approval | undefined> {
    const [row] = await this.#db.tenant(
      this.tenant,
      (tx) => tx<Row[]>`SELECT * FROM approvals WHERE tenant_id = ${this.tenant} AND id = ${id}`,
    );
    return row ? approval(row) : undefined;
  }

  /**
   * The tenant's approvals of every runtime, oldest first: pending ones (still within their
   * time), or decided ones.
   */
  async list(which: "pending" | "decided" = "pending"): Promise<Approval[]> {
    const rows = await this.#db.tenant(
      this.tenant,
      (tx) =>
        which === "pending"
          ? tx<Row[]>`SELECT * FROM approvals WHERE tenant_id = ${this.tenant}
            AND state = 'pending' AND expires_at > now() ORDER BY created_at, id`
          : tx<Row[]>`SELECT * FROM approvals WHERE tenant_id = ${this.tenant}
            AND state <> 'pending' ORDER BY decided_at DESC, id LIMIT 200`,
    );
    return rows.flatMap((row) => approval(row) ?? []);
  }

  /**
   * Resolves with approval `id` once it is no longer pending (decided on any runtime),
   * woken by its notification or, failing that, by the poll; rejects when `signal` aborts.
   */
  async settled(id: string, signal?: AbortSignal): Promise<Approval> {
    return await this.#signals.settled(
      id,
      () => this.get(id),
      // Past its time and its poster gone (or failing to end it): ended here, so no one
      // waits for ever on a record nobody can settle any more.
      () => this.finish(id, "expired"),
      signal,
    );
  }

  /**
   * Calls `listener` with the id of every approval a notification names: posted, decided,
   * expired or withdrawn on any runtime (the console's live view reads it back with `get`).
   * The channel is shared by every tenant, so an id may be another tenant's: `get` then
   * finds nothing, which is the wall. Notifications lost while the listening connection was
   * down are not replayed. Returns the function that removes the listener.
   */
  onChange(listener: (id: string) => void): () => void {
    return this.#signals.onChange(listener);
  }

  #notified(id: string): void {
    this.#signals.notified(id);
  }

  /** Stops listening; waiting calls go on by polling until they settle. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#unlisten?.();
  }
}

/**
 * A row as an approval, its held request parsed (any runtime of the tenant wrote the JSON):
 * undefined for one of the wrong shape, which is then not listed or decided here.
 */
function approval(row: Row): Approval | undefined {
  const request = parseRequestView(row.request);
  if (!request) {
    log(`approvals: a malformed approval row was skipped`);
    return undefined;
  }
  return {
    id: row.id,
    agent: row.agent,
    session: row.session,
    origin: row.origin,
    method: row.method,
    kind: row.kind,
    request,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    state: row.state,
    ...(row.decided_at ? { decided_at: row.decided_at.toISOString() } : {}),
    ...(row.decided_by ? { decided_by: row.decided_by } : {}),
  };
}
