/**
 * The harness of the decision board's tests (runtime/approvals/): the two stores every board
 * contract runs against (in memory; PostgreSQL as the runtime's role, a fresh tenant each),
 * runtimes of one tenant on PostgreSQL (a pool, store, audit and board each, as separate
 * processes would have), and the audit rows a waiting runtime writes. One copy for approvals
 * and questions, so their suites cannot drift apart.
 *
 * @module
 */
import type { DecisionBoardOptions } from "../../runtime/approvals/decision_board.ts";
import type { AuditEvent } from "../../runtime/store/audit_row.ts";
import type { DecisionKind, DecisionStore } from "../../runtime/store/decision_store.ts";
import { MemoryDecisionStore } from "../../runtime/store/memory_decision_store.ts";
import { PgDatabase } from "../../runtime/store/pg_database.ts";
import { PgDecisionStore } from "../../runtime/store/pg_decision_store.ts";
import { addTenant } from "../../runtime/store/pg_tenants.ts";
import { MemorySink } from "./memory_sink.ts";
import { until } from "./until.ts";

/** What the harness needs of a board. */
interface Board<E> {
  subscribe(listener: (event: E) => void): () => void;
  close(): Promise<void>;
}

/** Builds a kind's board over `store`. */
export type MakeBoard<K extends DecisionKind, B> = (
  store: DecisionStore<K>,
  audit: MemorySink,
  options: DecisionBoardOptions,
) => B;

/** One store a contract runs against. */
export interface BoardAdapter<B> {
  name: string;
  open(audit: MemorySink, now?: () => number): Promise<{ port: B } & AsyncDisposable>;
}

let tenants = 0;

/** A fresh tenant: each test sees its own records only. */
async function freshTenant(owner: PgDatabase): Promise<string> {
  const tenant = `d-${++tenants}-${crypto.randomUUID().slice(0, 8)}`;
  await addTenant(owner, tenant);
  return tenant;
}

/** The board of `kind` over each store: in memory, and PostgreSQL (`app`'s pool). */
export function boardAdapters<K extends DecisionKind, B extends Board<unknown>>(
  kind: K,
  pg: { app: PgDatabase; owner: PgDatabase },
  make: MakeBoard<K, B>,
): BoardAdapter<B>[] {
  return [
    {
      name: "memory",
      open(audit, now) {
        const port = make(new MemoryDecisionStore(kind), audit, { now });
        return Promise.resolve({ port, [Symbol.asyncDispose]: () => port.close() });
      },
    },
    {
      name: "postgres",
      async open(audit, now) {
        const store = await PgDecisionStore.open(pg.app, await freshTenant(pg.owner), kind, {
          runtime: "rt-1",
        });
        const port = make(store, audit, { now });
        return {
          port,
          async [Symbol.asyncDispose]() {
            await port.close();
            await store[Symbol.asyncDispose]();
          },
        };
      },
    },
  ];
}

/** One runtime of a tenant: its own pool, store, audit and board. */
export interface SharedRuntime<K extends DecisionKind, B, E> {
  db: PgDatabase;
  store: PgDecisionStore<K>;
  audit: MemorySink;
  board: B;
  /** What its console's live view heard. */
  events: E[];
}

/** Runtimes of one tenant, stopped together. */
export interface SharedRuntimes<K extends DecisionKind, B, E> extends AsyncDisposable {
  tenant: string;
  list: SharedRuntime<K, B, E>[];
}

/**
 * `n` runtimes of `tenant` (a fresh one by default); the pools are tight, so a stopped server
 * fails fast.
 */
export async function sharedRuntimes<K extends DecisionKind, B extends Board<E>, E>(
  pg: { appUrl: string; owner: PgDatabase },
  kind: K,
  n: number,
  make: MakeBoard<K, B>,
  options: { tenant?: string; pollMs?: number } = {},
): Promise<SharedRuntimes<K, B, E>> {
  const tenant = options.tenant ?? await freshTenant(pg.owner);
  const dbs = await Promise.all(
    Array.from(
      { length: n },
      () =>
        PgDatabase.open({ url: pg.appUrl, max: 4, statementTimeoutMs: 1_000, connectTimeoutS: 1 }),
    ),
  );
  const list: SharedRuntime<K, B, E>[] = [];
  const offs: (() => void)[] = [];
  for (const [i, db] of dbs.entries()) {
    const store = await PgDecisionStore.open(db, tenant, kind, { runtime: `rt-${i}` });
    const audit = new MemorySink();
    const board = make(store, audit, { pollMs: options.pollMs });
    const events: E[] = [];
    offs.push(board.subscribe((e) => events.push(e)));
    list.push({ db, store, audit, board, events });
  }
  return {
    tenant,
    list,
    async [Symbol.asyncDispose]() {
      for (const off of offs) off();
      for (const r of list) await r.board.close();
      for (const r of list) await r.store[Symbol.asyncDispose]();
      for (const db of dbs) await db[Symbol.asyncDispose]();
    },
  };
}

/** The one pending record `board` lists (posted on another runtime, or not yet). */
export async function onlyPending<R>(
  board: { list(state: "pending"): R[] | Promise<R[]> },
): Promise<R> {
  return await until(async () => {
    const list = await board.list("pending");
    return list.length === 1 ? list[0] : undefined;
  });
}

/**
 * The one record `board` lists in any state: for a record that may be finished before it is
 * first read (a short timeout on a loaded machine), where being seen pending is not the claim.
 */
export async function onlyListed<R>(board: { list(): R[] | Promise<R[]> }): Promise<R> {
  return await until(async () => {
    const list = await board.list();
    return list.length === 1 ? list[0] : undefined;
  });
}

/** The row a waiting runtime writes for an outcome of the held click: origin and method only. */
export function approvalRow(
  decision: AuditEvent["decision"],
  reason: string,
  rule: string | null,
): AuditEvent {
  return {
    session: "s-1",
    agent: "alice",
    kind: "approval",
    source: "operator",
    origin: "https://bank.test",
    method: "POST",
    decision,
    reason,
    rule,
  };
}

/** The row a waiting runtime writes for an outcome of a question: who and how, never the text. */
export function questionRow(reason: string, rule: string | null = null): AuditEvent {
  return {
    session: "s-1",
    agent: "alice",
    kind: "ask_human",
    source: "operator",
    decision: "event",
    reason,
    rule,
  };
}
