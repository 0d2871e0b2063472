/**
 * The decision board's port: where the decisions a human makes are kept. Two kinds share it:
 * an `approval` (a held write: approve or deny) and a `question` (`ask_human`, and a login's
 * push challenge, which is a question whose answer `approved` lets the login go on). Each
 * record is posted `pending` and leaves it once: by a human's outcome (`decide`), or by its
 * poster's end (`end`: the time ran out, the call went away). Of every race exactly one
 * outcome wins; the losers learn `not_pending`. The rules of the board (what an outcome
 * means to the waiting call, its audit row, its timeout) live once in
 * runtime/approvals/decision_board.ts; the adapters here only keep the records:
 * `memory_decision_store.ts` (one runtime, in memory) and `pg_decision_store.ts` (every
 * runtime of a tenant, in PostgreSQL).
 *
 * @module
 */
import { log } from "../mod.ts";
import type { RequestView } from "../net/mod.ts";

/** The longest question or answer kept, in characters; longer ones are cut. */
export const QUESTION_MAX_CHARS = 2_000;

/** Finished records `list("finished")` returns, newest first. */
export const DECISION_HISTORY = 200;

/** Who ended a record whose outcome never reached its call (its audit row could not be kept). */
export const UNRUN_BY = "audit-unavailable";

/** Where an approval stands. Everything but `pending` is final. */
export type ApprovalState = "pending" | "approved" | "denied" | "expired" | "withdrawn";

/** One approval, as listed to the console (a copy: changing it changes nothing). */
export interface Approval {
  /** Random and URL-safe: the console puts it in paths. */
  id: string;
  agent: string | null;
  session: string;
  /** The page's origin. */
  origin: string;
  /** The held request's method (escaped, as in `request.method`). */
  method: string;
  /** A form's own navigation submission, or a script's write (fetch, XHR). */
  kind: "form" | "script";
  /** The exact held request, as shown (for the operator's eyes only; secrets redacted). */
  request: RequestView;
  created_at: string;
  expires_at: string;
  state: ApprovalState;
  /** When it left `pending`. */
  decided_at?: string;
  /** Who decided (`console`, `api`), for approved and denied ones. */
  decided_by?: string;
}

/** Where a question stands. Everything but `pending` is final. */
export type QuestionState = "pending" | "answered" | "expired" | "withdrawn";

/** One question, as listed to the console (a copy). */
export interface HumanQuestion {
  /** Random and URL-safe. */
  id: string;
  agent: string | null;
  session: string | null;
  question: string;
  created_at: string;
  expires_at: string;
  state: QuestionState;
  answer?: string;
  answered_at?: string;
  /** Who answered (`console`, `api`). */
  answered_by?: string;
}

/** Each kind of decision: its record, and the outcome a human gives it. */
export interface DecisionKinds {
  approval: {
    record: Approval;
    outcome: { state: "approved" | "denied"; by: string };
  };
  question: {
    record: HumanQuestion;
    outcome: { state: "answered"; answer: string; by: string };
  };
}

/** A kind of decision the board holds. */
export type DecisionKind = keyof DecisionKinds;

/** A record of kind `K`. */
export type DecisionRecord<K extends DecisionKind> = DecisionKinds[K]["record"];

/** A human's outcome of a record of kind `K`. */
export type HumanOutcome<K extends DecisionKind> = DecisionKinds[K]["outcome"];

/** How a poster ends its own pending record. */
export type Ending = "expired" | "withdrawn";

/**
 * The answer of a human's outcome: `ok` when it won, `not_pending` when the record was
 * already finished or its time ran out (the API answers 409), `unknown` when there is none.
 */
export type SettleResult = "ok" | "not_pending" | "unknown";

/** Where the records of one kind are kept (one tenant's, on a shared store). */
export interface DecisionStore<K extends DecisionKind> {
  readonly kind: K;
  /** Adds pending `record`; rejects (`DB_UNAVAILABLE`) when it could not be stored. */
  post(record: DecisionRecord<K>): Promise<void>;
  /** A human's outcome of pending `id`, unless its time ran out. */
  decide(id: string, outcome: HumanOutcome<K>): Promise<SettleResult>;
  /** Ends pending `id` as `state`; true when that won over any other end. */
  end(id: string, state: Ending): Promise<boolean>;
  /**
   * Records an approved or answered `id` as what became of it when its outcome never reached
   * its call (the waiting runtime could not keep its audit row): an approval is then denied,
   * a question withdrawn without its answer, both by `UNRUN_BY`. True when it changed.
   */
  unrun(id: string): Promise<boolean>;
  /** Record `id`, or undefined. */
  get(id: string): Promise<DecisionRecord<K> | undefined>;
  /**
   * Pending records still within their time, oldest first; or the last `DECISION_HISTORY`
   * finished ones, newest first.
   */
  list(which: "pending" | "finished"): Promise<DecisionRecord<K>[]>;
  /**
   * Calls `listener` with the id of every record posted or changed (by any runtime, on a
   * shared store; the id may be another tenant's, which `get` then does not find). Returns
   * the function that removes it.
   */
  listen(listener: (id: string) => void): () => void;
}

/**
 * `text` as a question or an answer is kept: cut to `QUESTION_MAX_CHARS` (never in the middle
 * of a surrogate pair), NUL (which PostgreSQL's text cannot hold) made U+FFFD.
 */
export function questionText(text: string): string {
  let cut = text;
  if (cut.length > QUESTION_MAX_CHARS) {
    const end = /[\uD800-\uDBFF]/.test(cut[QUESTION_MAX_CHARS - 1])
      ? QUESTION_MAX_CHARS - 1
      : QUESTION_MAX_CHARS;
    cut = cut.slice(0, end);
  }
  return cut.replaceAll("\u0000", "\uFFFD");
}

/** Who decided, as kept: 40 characters at most, no NUL. */
export function deciderText(by: string): string {
  return questionText(by.slice(0, 40)).slice(0, 40);
}

/**
 * The listeners of a store's `listen`, for its adapters: each hears every id told; one that
 * throws is logged and skipped (the calls waiting on the others must still wake).
 */
export class IdListeners {
  readonly #listeners = new Set<(id: string) => void>();

  /** Adds `listener`; returns the function that removes it. */
  add(listener: (id: string) => void): () => void {
    // A wrapper per call, so adding one function twice needs two removals.
    const entry = (id: string) => listener(id);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Tells every listener `id`. */
  tell(id: string): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(id);
      } catch (err) {
        log(`decisions: a listener failed: ${(err as Error)?.name ?? "error"}`);
      }
    }
  }
}
