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
  request: Approval["request"];
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
  readonly #pollMs: number;
  readonly #waiting = new Map<string, Set<() => void>>();
  readonly #changes = new Set<(id: string) => void>();
  #unlisten: (() => Promise<void>) | undefined;

  private constructor(db: PgDatabase, tenant: string, runtime: string, pollMs: number) {
    this.#db = db;
    this.tenant = tenant;
    this.#runtime = runtime;
    this.#pollMs = pollMs;
  }

  /** A board for `tenant`, listening for changes made by any runtime. */
  static async open(
    db: PgDatabase,
    tenant: string,
    options: { runtime: string; pollMs?: number },
  ): Promise<PgApprovalBoard> {
    const board = new PgApprovalBoard(db, tenant, options.runtime, options.pollMs ?? BOARD_POLL_MS);
    board.#unlisten = await db.listen(APPROVALS_CHANNEL, (id) => board.#wake(id));
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
    return rows.map(approval);
  }

  /**
   * Resolves with approval `id` once it is no longer pending (decided on any runtime),
   * woken by its notification or, failing that, by the poll; rejects when `signal` aborts.
   */
  async settled(id: string, signal?: AbortSignal): Promise<Approval> {
    while (true) {
      signal?.throwIfAborted();
      const now = await this.get(id);
      if (!now) throw new Error(`no approval ${id}`);
      if (now.state !== "pending") return now;
      // Past its time and its poster gone (or failing to end it): ended here, so no one
      // waits for ever on an approval nobody can decide any more.
      if (Date.parse(now.expires_at) <= Date.now()) {
        await this.finish(id, "expired");
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", wake);
          const set = this.#waiting.get(id);
          set?.delete(wake);
          if (set?.size === 0) this.#waiting.delete(id);
          resolve();
        };
        const timer = setTimeout(wake, this.#pollMs);
        signal?.addEventListener("abort", wake, { once: true });
        let set = this.#waiting.get(id);
        if (!set) this.#waiting.set(id, set = new Set());
        set.add(wake);
      });
    }
  }

  /**
   * Calls `listener` with the id of every approval a notification names: posted, decided,
   * expired or withdrawn on any runtime (the console's live view reads it back with `get`).
   * The channel is shared by every tenant, so an id may be another tenant's: `get` then
   * finds nothing, which is the wall. Notifications lost while the listening connection was
   * down are not replayed. Returns the function that removes the listener.
   */
  onChange(listener: (id: string) => void): () => void {
    // A wrapper per call, so adding one function twice needs two removals.
    const entry = (id: string) => listener(id);
    this.#changes.add(entry);
    return () => {
      this.#changes.delete(entry);
    };
  }

  #wake(id: string): void {
    for (const listener of [...this.#changes]) {
      try {
        listener(id);
      } catch (err) {
        // A broken listener must not stop the waiting calls below from waking.
        log(`approvals: a change listener failed: ${(err as Error)?.name ?? "error"}`);
      }
    }
    const set = this.#waiting.get(id);
    if (!set) return;
    this.#waiting.delete(id);
    for (const wake of set) wake();
  }

  /** Stops listening; waiting calls go on by polling until they settle. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#unlisten?.();
  }
}

function approval(row: Row): Approval {
  return {
    id: row.id,
    agent: row.agent,
    session: row.session,
    origin: row.origin,
    method: row.method,
    kind: row.kind,
    request: row.request,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    state: row.state,
    ...(row.decided_at ? { decided_at: row.decided_at.toISOString() } : {}),
    ...(row.decided_by ? { decided_by: row.decided_by } : {}),
  };
}
