/**
 * The runtime's audit writer when the store is PostgreSQL: the surface the runtime uses of
 * the embedded `SqliteAuditLog` (`append`, `appendSoon`) over the asynchronous `AuditStore` port.
 * Rows are queued in the order they come and written in batches, one batch in flight at a
 * time, each batch one `AuditStore.append()` (one transaction): a burst of requests costs a
 * few round trips, not one each, and the chain holds the rows in the order they were queued.
 *
 * It fails closed. A network database cannot answer synchronously, so `append` (rows nothing
 * waits on) cannot know whether its own row will be kept; it knows whether the last batch
 * was, and throws `AUDIT_UNAVAILABLE` at once while the store is known to be failing. Rows
 * that waited on nothing and were then lost are logged by count and code (never their text).
 * `appendSoon` (rows an action or a request waits on) is always tried: it is how the sink
 * finds the database back, and one batch that commits makes it healthy again.
 *
 * One row the store refuses for what it holds (`AUDIT_ROW_REFUSED`) fails alone: its batch is
 * split until the refusal is that row's, the others are kept, and the sink stays healthy.
 *
 * @module
 */
import { errorCode, log as runtimeLog, OmotaiError } from "../mod.ts";
import type { AuditEvent, AuditRow, AuditWriter } from "./audit_row.ts";
import type { AuditStore } from "./audit_store.ts";

/** Rows per batch by default: one INSERT of this many stays well inside a statement's bound. */
export const AUDIT_BATCH_MAX = 500;

/** While unhealthy, how often the store is asked whether it answers again. */
export const AUDIT_PROBE_MS = 2_000;

/** How a sink batches and whom it tells. */
export interface PgAuditSinkOptions {
  /**
   * Called when the sink turns unhealthy (a batch failed) or healthy again (a batch
   * committed after a failure): the console's "database unavailable" banner. Called on
   * changes only; what it throws is ignored (the audit does not depend on its watcher).
   */
  onHealth?: (healthy: boolean) => void;
  /** Rows per transaction at most (default {@link AUDIT_BATCH_MAX}). */
  maxBatch?: number;
  /** While unhealthy, how often the store is asked whether it is back (default 2 s; 0: never). */
  probeMs?: number;
}

/** One queued row: `resolve`/`reject` when a caller waits on it (`appendSoon`). */
interface Pending {
  event: AuditEvent;
  resolve?: (row: AuditRow) => void;
  reject?: (err: OmotaiError) => void;
}

/** Queues audit rows and writes them to an `AuditStore` in ordered batches. */
export class PgAuditSink implements AuditWriter, AsyncDisposable {
  readonly #store: AuditStore;
  readonly #onHealth: ((healthy: boolean) => void) | undefined;
  readonly #maxBatch: number;
  #queue: Pending[] = [];
  #healthy = true;
  /** A drain is scheduled or running: the one batch in flight is its. */
  #draining = false;
  /** Rows queued and settled since the start: `flush()` waits for the one to reach the other. */
  #queued = 0;
  #settled = 0;
  #waiters: { upTo: number; resolve: () => void }[] = [];
  readonly #probeMs: number;
  #probe: ReturnType<typeof setInterval> | undefined;
  #disposed = false;

  /** Writes to `store` (a `PgAuditLog` in production; any `AuditStore`). */
  constructor(store: AuditStore, options: PgAuditSinkOptions = {}) {
    this.#store = store;
    this.#onHealth = options.onHealth;
    this.#maxBatch = Math.max(1, Math.floor(options.maxBatch ?? AUDIT_BATCH_MAX));
    this.#probeMs = options.probeMs ?? AUDIT_PROBE_MS;
  }

  /** False from a failed batch until one commits again. */
  get healthy(): boolean {
    return this.#healthy;
  }

  /**
   * Queues a row nothing waits on. Throws `AUDIT_UNAVAILABLE` (and queues nothing) while the
   * store is known to be failing: the caller then denies, as with the embedded log. A row
   * queued here whose batch fails is logged by code and marks the sink unhealthy.
   */
  append(event: AuditEvent): void {
    if (!this.#healthy) {
      throw new OmotaiError(
        "AUDIT_UNAVAILABLE",
        "audit row not written: the audit database is unavailable",
      );
    }
    this.#enqueue({ event });
  }

  /**
   * Queues a row and resolves once it is committed; rejects with `AUDIT_UNAVAILABLE` (every
   * row of its batch alike) when it cannot be, and callers then deny. Tried even while the
   * sink is unhealthy: a commit is how it learns the database is back.
   */
  appendSoon(event: AuditEvent): Promise<AuditRow> {
    return new Promise((resolve, reject) => this.#enqueue({ event, resolve, reject }));
  }

  /** Resolves once every row queued so far is settled (committed or failed). */
  flush(): Promise<void> {
    if (this.#settled >= this.#queued) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ upTo: this.#queued, resolve }));
  }

  /** Flushes (at shutdown: the last rows are written or logged before the pool closes). */
  async [Symbol.asyncDispose](): Promise<void> {
    this.#disposed = true;
    clearInterval(this.#probe);
    await this.flush();
  }

  #enqueue(pending: Pending): void {
    this.#queue.push(pending);
    this.#queued++;
    if (this.#draining) return;
    this.#draining = true;
    // A microtask later, so the rows of this turn of the event loop go out as one batch.
    queueMicrotask(() => void this.#drain());
  }

  /** Writes batch after batch until the queue is empty; rows that came meanwhile are next. */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        await this.#write(this.#queue.splice(0, this.#maxBatch));
      }
    } finally {
      this.#draining = false;
    }
  }

  /** One batch, one transaction; never throws (its outcome goes to its rows). */
  async #write(batch: Pending[]): Promise<void> {
    // `code` is the store's own (what the log says); `err` is what the waiters get.
    let outcome: { rows: AuditRow[] } | { err: OmotaiError; code: string };
    try {
      const rows = await this.#store.append(batch.map((p) => p.event));
      // A store that returns another count than it was given kept an unknown part: not kept.
      outcome = rows.length === batch.length
        ? { rows }
        : { err: unavailable("AUDIT_ROWS_MISSING"), code: "AUDIT_ROWS_MISSING" };
    } catch (err) {
      if (codeOf(err) === "AUDIT_ROW_REFUSED" && batch.length > 1) {
        // The store refused a row it cannot take, and with it the rows batched beside it:
        // halves are tried in order until the refusal is that row's alone (a few statements
        // for one row among 500, not 500).
        const half = Math.ceil(batch.length / 2);
        await this.#write(batch.slice(0, half));
        await this.#write(batch.slice(half));
        return;
      }
      outcome = { err: asUnavailable(err), code: codeOf(err) };
    }
    if ("err" in outcome) {
      const { err, code } = outcome;
      // A row refused for what it holds says nothing of the store, which took the others.
      if (code !== "AUDIT_ROW_REFUSED") this.#setHealthy(false);
      const unawaited = batch.filter((p) => !p.reject).length;
      if (unawaited > 0) {
        // Count and code only: the rows' text and the store's message stay out of the log.
        runtimeLog(`audit: ${unawaited} queued row(s) not written (${code})`);
      }
      for (const p of batch) p.reject?.(err);
    } else {
      const { rows } = outcome;
      this.#setHealthy(true);
      batch.forEach((p, i) => p.resolve?.(rows[i]));
    }
    this.#settled += batch.length;
    const ready = this.#waiters.filter((w) => w.upTo <= this.#settled);
    this.#waiters = this.#waiters.filter((w) => w.upTo > this.#settled);
    for (const w of ready) w.resolve();
  }

  #setHealthy(healthy: boolean): void {
    if (this.#healthy === healthy) return;
    this.#healthy = healthy;
    // While failing, the store is asked now and then (its head, a read) whether it is back:
    // a runtime nobody acts on must not stay "unavailable" to the console for ever, nor
    // refuse its lifecycle rows once the database answers again.
    clearInterval(this.#probe);
    this.#probe = undefined;
    if (!healthy && !this.#disposed && this.#probeMs > 0) {
      this.#probe = setInterval(() => {
        this.#store.head().then(() => this.#setHealthy(true), () => {});
      }, this.#probeMs);
      Deno.unrefTimer(this.#probe);
    }
    runtimeLog(healthy ? "audit: database writes resumed" : "audit: database unavailable");
    try {
      this.#onHealth?.(healthy);
    } catch {
      // The watcher's failure is its own; the rows' outcome does not change with it.
    }
  }
}

/**
 * A store's failure as the port's error: its own `AUDIT_UNAVAILABLE` passes (the store
 * redacted its message); anything else is rewrapped with its code only, since a message
 * from a store that broke the port's contract may quote the rows.
 */
function asUnavailable(err: unknown): OmotaiError {
  if (err instanceof OmotaiError && err.code === "AUDIT_UNAVAILABLE") return err;
  return unavailable(codeOf(err));
}

function unavailable(code: string): OmotaiError {
  return new OmotaiError("AUDIT_UNAVAILABLE", `audit rows not written (${code})`);
}

function codeOf(err: unknown): string {
  return errorCode(err) ?? "ERROR";
}
