/**
 * The decision board's records in this process's memory (the embedded store: one runtime,
 * nothing shared). The same rules as `PgDecisionStore`'s table and trigger: a record is posted
 * pending and leaves it once, a human's outcome only while its time runs, and nothing but its
 * outcome changes. Every record handed in or out is a copy.
 *
 * @module
 */
import type {
  DecisionKind,
  DecisionRecord,
  DecisionStore,
  Ending,
  HumanOutcome,
  SettleResult,
} from "./decision_store.ts";
import {
  deciderText,
  DECISION_HISTORY,
  IdListeners,
  questionText,
  UNRUN_BY,
} from "./decision_store.ts";

/** Options of `MemoryDecisionStore`. */
export interface MemoryDecisionStoreOptions {
  /** Finished records kept for the console's history; default `DECISION_HISTORY`. */
  keep?: number;
}

/** One kind's records, in memory. */
export class MemoryDecisionStore<K extends DecisionKind> implements DecisionStore<K> {
  readonly kind: K;
  readonly #keep: number;
  /** Pending records, oldest first. */
  readonly #pending = new Map<string, DecisionRecord<K>>();
  /** Finished records, newest first. */
  #finished: DecisionRecord<K>[] = [];
  readonly #listeners = new IdListeners();

  constructor(kind: K, options: MemoryDecisionStoreOptions = {}) {
    this.kind = kind;
    this.#keep = Math.max(0, options.keep ?? DECISION_HISTORY);
  }

  post(record: DecisionRecord<K>): Promise<void> {
    const kept = structuredClone(record);
    kept.state = "pending";
    if (this.kind === "question") {
      const q = kept as DecisionRecord<"question">;
      q.question = questionText(q.question);
    }
    this.#pending.set(kept.id, kept);
    this.#notify(kept.id);
    return Promise.resolve();
  }

  decide(id: string, outcome: HumanOutcome<K>): Promise<SettleResult> {
    const record = this.#pending.get(id);
    if (!record || Date.parse(record.expires_at) <= Date.now()) {
      return Promise.resolve(record || this.#find(id) ? "not_pending" : "unknown");
    }
    const by = deciderText(outcome.by);
    const at = new Date().toISOString();
    if (this.kind === "question") {
      const q = record as DecisionRecord<"question">;
      q.answer = questionText((outcome as HumanOutcome<"question">).answer);
      q.answered_at = at;
      q.answered_by = by;
    } else {
      const a = record as DecisionRecord<"approval">;
      a.decided_at = at;
      a.decided_by = by;
    }
    this.#finish(record, outcome.state);
    return Promise.resolve("ok");
  }

  end(id: string, state: Ending): Promise<boolean> {
    const record = this.#pending.get(id);
    if (!record) return Promise.resolve(false);
    const at = new Date().toISOString();
    if (this.kind === "question") (record as DecisionRecord<"question">).answered_at = at;
    else (record as DecisionRecord<"approval">).decided_at = at;
    this.#finish(record, state);
    return Promise.resolve(true);
  }

  unrun(id: string): Promise<boolean> {
    const record = this.#find(id);
    if (!record) return Promise.resolve(false);
    if (this.kind === "question" && record.state === "answered") {
      const q = record as DecisionRecord<"question">;
      q.state = "withdrawn";
      delete q.answer;
      q.answered_by = UNRUN_BY;
    } else if (this.kind === "approval" && record.state === "approved") {
      const a = record as DecisionRecord<"approval">;
      a.state = "denied";
      a.decided_by = UNRUN_BY;
    } else {
      return Promise.resolve(false);
    }
    this.#notify(id);
    return Promise.resolve(true);
  }

  get(id: string): Promise<DecisionRecord<K> | undefined> {
    const record = this.#pending.get(id) ?? this.#find(id);
    return Promise.resolve(record ? structuredClone(record) : undefined);
  }

  list(which: "pending" | "finished"): Promise<DecisionRecord<K>[]> {
    const now = Date.now();
    const records = which === "pending"
      ? [...this.#pending.values()].filter((r) => Date.parse(r.expires_at) > now)
      : this.#finished;
    return Promise.resolve(records.map((r) => structuredClone(r)));
  }

  listen(listener: (id: string) => void): () => void {
    return this.#listeners.add(listener);
  }

  #find(id: string): DecisionRecord<K> | undefined {
    return this.#finished.find((r) => r.id === id);
  }

  #finish(record: DecisionRecord<K>, state: DecisionRecord<K>["state"]): void {
    this.#pending.delete(record.id);
    record.state = state;
    this.#finished.unshift(record);
    if (this.#finished.length > this.#keep) this.#finished.length = this.#keep;
    this.#notify(record.id);
  }

  #notify(id: string): void {
    this.#listeners.tell(id);
  }
}
