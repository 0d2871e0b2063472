/**
 * Questions an agent asks the operator (`ask_human {question}`): listed on the console,
 * answered there or through the API, or timed out. Audit rows record that a question was
 * asked and how it ended, never its text or the answer: either can carry anything.
 *
 * @module
 */
import type { AuditEvent, AuditSink } from "../audit/audit_row.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
import { HumanWait } from "./human_wait.ts";
import { Listeners } from "./listeners.ts";

/** The longest question or answer kept, in characters; longer ones are cut. */
export const QUESTION_MAX_CHARS = 2_000;

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

/** What the console's live view hears. */
export interface QuestionEvent {
  type: "added" | "answered" | "expired" | "withdrawn";
  question: HumanQuestion;
}

/** What `ask()` was asked. */
export interface AskRequest {
  question: string;
  agent: string | null;
  session: string | null;
}

/** The human's answer, or that none came in time. */
export type AskOutcome = { answer: string } | { timeout: true };

/** `answer()`'s result: `not_pending` when already answered, expired or withdrawn. */
export type AnswerResult = "ok" | "not_pending" | "unknown";

/** Options of `HumanQuestions`. */
export interface HumanQuestionsOptions {
  /** Finished questions kept for the console's history; default 200. */
  keepAnswered?: number;
  /** The clock (tests); default `Date.now`. */
  now?: () => number;
}

interface Entry {
  record: HumanQuestion;
  wait: HumanWait<AskOutcome>;
}

/** Questions waiting for the operator. */
export class HumanQuestions {
  readonly #audit: AuditSink;
  readonly #keep: number;
  readonly #now: () => number;
  readonly #pending = new Map<string, Entry>();
  /** Finished questions, newest first. */
  #done: HumanQuestion[] = [];
  readonly #listeners = new Listeners<QuestionEvent>();

  /** `audit` receives a row per outcome (no text of the question or the answer). */
  constructor(audit: AuditSink, options: HumanQuestionsOptions = {}) {
    this.#audit = audit;
    this.#keep = Math.max(0, options.keepAnswered ?? 200);
    this.#now = options.now ?? Date.now;
  }

  /**
   * Lists the question and waits up to `timeoutMs` for an answer. Rejects with
   * `ASK_WITHDRAWN` when `signal` aborts (the agent's call was cancelled or its client left).
   */
  ask(request: AskRequest, timeoutMs: number, signal?: AbortSignal): Promise<AskOutcome> {
    const now = this.#now();
    const record: HumanQuestion = {
      id: crypto.randomUUID(),
      agent: request.agent,
      session: request.session,
      question: cap(request.question),
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + Math.max(0, timeoutMs || 0)).toISOString(),
      state: "pending",
    };
    const withdrawn = () =>
      new OmotaiError("ASK_WITHDRAWN", "the question was withdrawn: the call was cancelled");
    if (signal?.aborted) {
      this.#finish(record, "withdrawn");
      return Promise.reject(withdrawn());
    }
    const wait = new HumanWait<AskOutcome>(timeoutMs, signal, {
      timeout: () => {
        this.#pending.delete(record.id);
        this.#finish(record, "expired");
        return { timeout: true };
      },
      abort: () => {
        this.#pending.delete(record.id);
        this.#finish(record, "withdrawn");
        throw withdrawn();
      },
    });
    this.#pending.set(record.id, { record, wait });
    this.#listeners.emit({ type: "added", question: copy(record) });
    return wait.promise;
  }

  /**
   * The operator's answer to question `id` (cut to `QUESTION_MAX_CHARS`). Throws
   * `AUDIT_UNAVAILABLE`, leaving the question pending, when its row cannot be written.
   */
  answer(id: string, text: string, by: string): AnswerResult {
    const entry = this.#pending.get(id);
    if (!entry) return this.#done.some((q) => q.id === id) ? "not_pending" : "unknown";
    const { record, wait } = entry;
    // Written before anything changes, so a failure leaves the question to answer again.
    try {
      this.#write(record, "answered", by.slice(0, 40));
    } catch (err) {
      throw new OmotaiError("AUDIT_UNAVAILABLE", "the answer could not be audited; try again", {
        cause: err,
      });
    }
    this.#pending.delete(id);
    record.answer = cap(text);
    record.answered_by = by.slice(0, 40);
    this.#finish(record, "answered", true);
    wait.settle({ answer: record.answer });
    return "ok";
  }

  /** Questions newest first: the pending ones, the finished ones, or both (pending first). */
  list(state?: "pending" | "answered"): HumanQuestion[] {
    const pending = [...this.#pending.values()].map((e) => e.record).reverse();
    const all = state === "pending"
      ? pending
      : state === "answered"
      ? this.#done
      : [...pending, ...this.#done];
    return all.map(copy);
  }

  /** Hears every change; returns the unsubscribe function. */
  subscribe(listener: (event: QuestionEvent) => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** Withdraws every pending question (the runtime is stopping); their `ask()`s reject. */
  close(): void {
    for (const { wait } of [...this.#pending.values()]) wait.cancel();
  }

  /** Moves `record` to its final `state`: audit row (unless `written`), history, event. */
  #finish(
    record: HumanQuestion,
    state: Exclude<QuestionState, "pending">,
    written = false,
  ): void {
    if (!written) {
      try {
        this.#write(record, state, null);
      } catch (err) {
        // An expiry or withdrawal happens whether or not it can be written down.
        log(`questions: audit row not written (${(err as { code?: string }).code ?? "error"})`);
      }
    }
    record.state = state;
    const at = new Date(this.#now()).toISOString();
    if (state === "answered") record.answered_at = at;
    this.#done.unshift(record);
    if (this.#done.length > this.#keep) this.#done.length = this.#keep;
    this.#listeners.emit({ type: state, question: copy(record) });
  }

  /** The outcome's row: who and how it ended, never the text. */
  #write(
    record: HumanQuestion,
    state: Exclude<QuestionState, "pending">,
    by: string | null,
  ): void {
    const reason = { answered: "ANSWERED", expired: "ASK_TIMEOUT", withdrawn: "ASK_WITHDRAWN" }[
      state
    ];
    const event: AuditEvent = {
      session: record.session,
      agent: record.agent,
      kind: "ask_human",
      source: "operator",
      decision: "event",
      reason,
      rule: by,
    };
    this.#audit.append(event);
  }
}

function cap(text: string): string {
  return text.length > QUESTION_MAX_CHARS ? text.slice(0, QUESTION_MAX_CHARS) : text;
}

function copy(q: HumanQuestion): HumanQuestion {
  return { ...q };
}
