/**
 * The decision board's records shared by every runtime of a tenant, in PostgreSQL: approvals
 * in `approvals`, questions (and push challenges) in `questions`, both under row-level
 * security. One runtime posts the record its agent's call waits on; the operator decides it on
 * any runtime's console or API; the posting runtime hears of it within a second (`LISTEN` /
 * `NOTIFY`, and the board's poll behind it in case a notification is lost).
 *
 * Every change of state is one conditional update (`WHERE state = 'pending'`, and for a
 * human's outcome `AND expires_at > now()`): of an outcome on one runtime, another on a second
 * and the poster's own timeout, exactly one wins, and the others learn they lost
 * (`not_pending`). A trigger of each table keeps a finished record finished and lets nothing
 * but its outcome change. Notifications carry the record's random id only, never its text:
 * a listener of another tenant learns nothing it could read.
 *
 * @module
 */
import { log } from "../mod.ts";
import { parseRequestView } from "../net/mod.ts";
import {
  type Approval,
  type ApprovalState,
  deciderText,
  DECISION_HISTORY,
  type DecisionKind,
  type DecisionRecord,
  type DecisionStore,
  type Ending,
  type HumanOutcome,
  type HumanQuestion,
  IdListeners,
  type QuestionState,
  questionText,
  type SettleResult,
  UNRUN_BY,
} from "./decision_store.ts";
import type { PgDatabase, PgTx } from "./pg_database.ts";

/** The channels every runtime listens on, per kind. */
export const DECISION_CHANNELS = {
  approval: "omotai_approvals",
  question: "omotai_questions",
} as const satisfies Record<DecisionKind, string>;

/** What a record id looks like (ours are UUIDs): anything else on a channel is ignored. */
const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A row of either table: the columns both have, and each one's own. */
interface Row {
  id: string;
  agent: string | null;
  session: string | null;
  created_at: Date;
  expires_at: Date;
  state: string;
  // approvals
  origin?: string;
  method?: string;
  kind?: "form" | "script";
  request?: unknown;
  decided_at?: Date | null;
  decided_by?: string | null;
  // questions
  question?: string;
  answer?: string | null;
  answered_at?: Date | null;
  answered_by?: string | null;
}

/** How one kind sits in its table: the only place the two kinds differ here. */
interface Table<K extends DecisionKind> {
  name: string;
  /** The columns of who and when. */
  at: string;
  by: string;
  insert(tx: PgTx, tenant: string, runtime: string, record: DecisionRecord<K>): Promise<unknown>;
  /** The columns a human's outcome sets besides `state`, `at` and `by`. */
  outcome(tx: PgTx, outcome: HumanOutcome<K>): ReturnType<PgTx>;
  /** The state a record whose outcome never reached its call moves from, and to. */
  unrun: { from: string; to: string; clear: (tx: PgTx) => ReturnType<PgTx> };
  record(row: Row): DecisionRecord<K> | undefined;
}

const APPROVALS: Table<"approval"> = {
  name: "approvals",
  at: "decided_at",
  by: "decided_by",
  insert: (tx, tenant, runtime, r) =>
    tx`INSERT INTO approvals (tenant_id, id, runtime, agent, session, origin, method, kind,
        request, created_at, expires_at, state)
      VALUES (${tenant}, ${r.id}, ${runtime}, ${r.agent}, ${r.session}, ${r.origin},
        ${r.method}, ${r.kind}, ${tx.json(JSON.parse(JSON.stringify(r.request)))},
        ${r.created_at}, ${r.expires_at}, 'pending')`,
  outcome: (tx) => tx``,
  unrun: { from: "approved", to: "denied", clear: (tx) => tx`` },
  record: approval,
};

const QUESTIONS: Table<"question"> = {
  name: "questions",
  at: "answered_at",
  by: "answered_by",
  insert: (tx, tenant, runtime, r) =>
    tx`INSERT INTO questions (tenant_id, id, runtime, agent, session, question, created_at,
        expires_at, state)
      VALUES (${tenant}, ${r.id}, ${runtime}, ${r.agent}, ${r.session},
        ${questionText(r.question)}, ${r.created_at}, ${r.expires_at}, 'pending')`,
  outcome: (tx, o) => tx`, answer = ${questionText(o.answer)}`,
  // The answer nobody acted on is not kept.
  unrun: { from: "answered", to: "withdrawn", clear: (tx) => tx`, answer = NULL` },
  record: question,
};

const TABLES: { [K in DecisionKind]: Table<K> } = { approval: APPROVALS, question: QUESTIONS };

/** One tenant's records of one kind, as one runtime sees and changes them. */
export class PgDecisionStore<K extends DecisionKind> implements DecisionStore<K>, AsyncDisposable {
  readonly kind: K;
  readonly tenant: string;
  readonly #db: PgDatabase;
  readonly #runtime: string;
  readonly #table: Table<K>;
  readonly #channel: string;
  readonly #listeners = new IdListeners();
  #unlisten: (() => Promise<void>) | undefined;

  private constructor(db: PgDatabase, tenant: string, kind: K, runtime: string) {
    this.#db = db;
    this.tenant = tenant;
    this.kind = kind;
    this.#runtime = runtime;
    this.#table = TABLES[kind] as Table<K>;
    this.#channel = DECISION_CHANNELS[kind];
  }

  /** `tenant`'s records of `kind`, listening for changes made by any runtime. */
  static async open<K extends DecisionKind>(
    db: PgDatabase,
    tenant: string,
    kind: K,
    options: { runtime: string },
  ): Promise<PgDecisionStore<K>> {
    const store = new PgDecisionStore(db, tenant, kind, options.runtime);
    store.#unlisten = await db.listen(store.#channel, (id) => store.#notified(id));
    return store;
  }

  async post(record: DecisionRecord<K>): Promise<void> {
    await this.#db.tenant(this.tenant, async (tx) => {
      await this.#table.insert(tx, this.tenant, this.#runtime, record);
      await this.#notify(tx, record.id);
    });
  }

  async decide(id: string, outcome: HumanOutcome<K>): Promise<SettleResult> {
    const t = this.#table;
    return await this.#db.tenant(this.tenant, async (tx) => {
      const won = await tx`UPDATE ${tx(t.name)}
        SET state = ${outcome.state}, ${tx(t.at)} = now(), ${tx(t.by)} = ${
        deciderText(outcome.by)
      } ${t.outcome(tx, outcome)}
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'pending'
          AND expires_at > now()
        RETURNING id`;
      if (won.length > 0) {
        await this.#notify(tx, id);
        return "ok";
      }
      const found = await tx`SELECT 1 FROM ${tx(t.name)} WHERE tenant_id = ${this.tenant}
        AND id = ${id}`;
      return found.length > 0 ? "not_pending" : "unknown";
    });
  }

  async end(id: string, state: Ending): Promise<boolean> {
    const t = this.#table;
    return await this.#db.tenant(this.tenant, async (tx) => {
      const won = await tx`UPDATE ${tx(t.name)} SET state = ${state}, ${tx(t.at)} = now()
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'pending' RETURNING id`;
      if (won.length > 0) await this.#notify(tx, id);
      return won.length > 0;
    });
  }

  async unrun(id: string): Promise<boolean> {
    const t = this.#table;
    const { from, to, clear } = t.unrun;
    return await this.#db.tenant(this.tenant, async (tx) => {
      const changed = await tx`UPDATE ${tx(t.name)} SET state = ${to},
          ${tx(t.by)} = ${UNRUN_BY} ${clear(tx)}
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = ${from} RETURNING id`;
      if (changed.length > 0) await this.#notify(tx, id);
      return changed.length > 0;
    });
  }

  async get(id: string): Promise<DecisionRecord<K> | undefined> {
    const t = this.#table;
    const [row] = await this.#db.tenant(
      this.tenant,
      (tx) =>
        tx<Row[]>`SELECT * FROM ${tx(t.name)} WHERE tenant_id = ${this.tenant} AND id = ${id}`,
    );
    return row ? t.record(row) : undefined;
  }

  async list(which: "pending" | "finished"): Promise<DecisionRecord<K>[]> {
    const t = this.#table;
    const rows = await this.#db.tenant(
      this.tenant,
      (tx) =>
        which === "pending"
          ? tx<Row[]>`SELECT * FROM ${tx(t.name)} WHERE tenant_id = ${this.tenant}
            AND state = 'pending' AND expires_at > now() ORDER BY created_at, id`
          : tx<Row[]>`SELECT * FROM ${tx(t.name)} WHERE tenant_id = ${this.tenant}
            AND state <> 'pending' ORDER BY ${tx(t.at)} DESC, id LIMIT ${DECISION_HISTORY}`,
    );
    return rows.flatMap((row) => t.record(row) ?? []);
  }

  listen(listener: (id: string) => void): () => void {
    return this.#listeners.add(listener);
  }

  /** Stops listening; waiting calls go on by the board's poll until they settle. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#unlisten?.();
  }

  async #notify(tx: PgTx, id: string): Promise<void> {
    await tx`SELECT pg_notify(${this.#channel}, ${id})`;
  }

  #notified(id: string): void {
    // Not an id of ours (anyone may NOTIFY): nothing to read back.
    if (!ID.test(id)) return;
    this.#listeners.tell(id);
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
    session: row.session ?? "",
    origin: row.origin ?? "",
    method: row.method ?? "",
    kind: row.kind ?? "form",
    request,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    state: row.state as ApprovalState,
    ...(row.decided_at ? { decided_at: row.decided_at.toISOString() } : {}),
    ...(row.decided_by ? { decided_by: row.decided_by } : {}),
  };
}

/** A row as a question. */
function question(row: Row): HumanQuestion {
  return {
    id: row.id,
    agent: row.agent,
    session: row.session,
    question: row.question ?? "",
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    state: row.state as QuestionState,
    ...(row.answer != null ? { answer: row.answer } : {}),
    // Only an answered question has an answer's time and author.
    ...(row.state === "answered" && row.answered_at
      ? { answered_at: row.answered_at.toISOString() }
      : {}),
    ...(row.answered_by != null ? { answered_by: row.answered_by } : {}),
  };
}
