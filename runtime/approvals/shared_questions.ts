/**
 * Operator questions shared by every runtime of a tenant: the `HumanChannel` (`ask_human`,
 * login push challenges) and the console's port of a runtime whose store is PostgreSQL, over
 * a {@link PgQuestionBoard}. A question asked on one runtime is posted to the board, listed
 * on every runtime's console and answered on any of them; the asking runtime hears the
 * answer within a second and returns it. The surface is `HumanQuestions`', with `answer`,
 * `list` and `close` asynchronous.
 *
 * Who does what: exactly one outcome wins, by the board's conditional update (an answer on
 * one runtime, another on a second, the asker's timeout and its caller's abort all race
 * there). The ASKING runtime alone writes the outcome's audit row (the rows
 * `HumanQuestions` writes: `ANSWERED` naming the door, `ASK_TIMEOUT`, `ASK_WITHDRAWN`;
 * never the question's text or the answer), once, before its `ask` returns.
 *
 * Fail closed, and never a fabricated answer: the only answer `ask` returns is one read back
 * from the board, and only once its `ANSWERED` row is written (else `AUDIT_UNAVAILABLE`, as
 * `HumanQuestions.answer` refuses an answer it cannot audit). A post the database refuses
 * REJECTS with `ASK_UNAVAILABLE` at once: nobody could be asked, and a `{timeout: true}`
 * would tell the model (or a login's push, `PUSH_TIMEOUT`) that the operator saw it and
 * did not answer. `ask_human` then refuses with that code; a push challenge ends the login as
 * `LOGIN_FAILED` ("the login stopped: ASK_UNAVAILABLE"); neither carries the question's text
 * nor anything of the database's error. A database that fails while the call waits is waited
 * out until the timeout; a board that cannot be read at the deadline is a timeout.
 *
 * @module
 */
import type { AuditEvent } from "../audit/audit_row.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
import { Listeners } from "./listeners.ts";
import { BoardClient, codeOf } from "./board_client.ts";
import { type PgQuestionBoard, QUESTION_POLL_MS, questionText } from "./pg_question_board.ts";
import type {
  AnswerResult,
  AskOutcome,
  AskRequest,
  HumanQuestion,
  QuestionEvent,
  QuestionState,
} from "./questions.ts";

/** Where the outcome's audit row goes (`AuditLog`, `PgAuditLog`). */
export interface SharedQuestionsAudit {
  /** Resolves once the row is stored; rejects when it cannot be. */
  appendSoon(event: AuditEvent): Promise<unknown>;
}

/** Options of `SharedQuestions`. */
export interface SharedQuestionsOptions {
  /**
   * The clock of the records' `created_at` and `expires_at` (tests); default `Date.now`. The
   * board's own checks of `expires_at` use the database's clock and this process's.
   */
  now?: () => number;
}

/** The longest delay a timer takes (larger ones fire at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** How long a wait of `timeoutMs` lasts: not finite or negative is no time at all. */
function waitMs(timeoutMs: number): number {
  return Number.isFinite(timeoutMs) ? Math.min(Math.max(0, timeoutMs), MAX_DELAY_MS) : 0;
}

function withdrawnError(): OmotaiError {
  return new OmotaiError("ASK_WITHDRAWN", "the question was withdrawn: the call was cancelled");
}

/**
 * The questions of one runtime of a tenant whose questions live in PostgreSQL. It neither
 * opens nor closes the board: the board's owner stops its listening.
 */
export class SharedQuestions {
  readonly #board: PgQuestionBoard;
  readonly #audit: SharedQuestionsAudit;
  readonly #now: () => number;
  readonly #listeners = new Listeners<QuestionEvent>();
  readonly #client: BoardClient<HumanQuestion>;

  /** `audit` receives one row per outcome of this runtime's questions (never their text). */
  constructor(
    board: PgQuestionBoard,
    audit: SharedQuestionsAudit,
    options: SharedQuestionsOptions = {},
  ) {
    this.#board = board;
    this.#audit = audit;
    this.#now = options.now ?? Date.now;
    this.#client = new BoardClient("questions", board, QUESTION_POLL_MS, (question) => {
      const type = question.state === "pending" ? "added" : question.state;
      this.#listeners.emit({ type, question });
    });
  }

  /**
   * Posts the question to the tenant's board and waits up to `timeoutMs` for an answer given
   * on any runtime. Rejects with `ASK_WITHDRAWN` when `signal` aborts (or the runtime
   * closes), `ASK_UNAVAILABLE` when the question could not be posted (or the runtime is
   * closed), `AUDIT_UNAVAILABLE` when an answer came but its row could not be written.
   */
  ask(request: AskRequest, timeoutMs: number, signal?: AbortSignal): Promise<AskOutcome> {
    const now = this.#now();
    const delay = waitMs(timeoutMs);
    const record: HumanQuestion = {
      id: crypto.randomUUID(),
      agent: request.agent,
      session: request.session,
      question: questionText(request.question),
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + delay).toISOString(),
      state: "pending",
    };
    if (this.#client.closed) {
      return Promise.reject(
        new OmotaiError("ASK_UNAVAILABLE", "the runtime is stopping: the operator cannot be asked"),
      );
    }
    return this.#client.track(this.#ask(record, delay, signal));
  }

  /**
   * The operator's answer to question `id`, whichever runtime asked it (cut to
   * `QUESTION_MAX_CHARS`); `by` names the door (`console`, `api`). `ok` when it won; the
   * asking runtime then returns it. Rejects with `DB_UNAVAILABLE` when the database cannot
   * be reached.
   */
  async answer(id: string, text: string, by: string): Promise<AnswerResult> {
    return await this.#board.answer(id, text, by);
  }

  /**
   * The tenant's questions of every runtime, newest first: the pending ones, the finished
   * ones (answered, expired, withdrawn: `"answered"`, as `HumanQuestions` names them), or
   * both (pending first). Rejects with `DB_UNAVAILABLE` when the database cannot be reached.
   */
  async list(state?: "pending" | "answered"): Promise<HumanQuestion[]> {
    const pending = state === "answered" ? [] : (await this.#board.list("pending")).reverse();
    const finished = state === "pending" ? [] : await this.#board.list("finished");
    return [...pending, ...finished];
  }

  /**
   * Hears every change to the tenant's questions made by any runtime (`added`, `answered`,
   * `expired`, `withdrawn`); returns the unsubscribe function. A notification lost while the
   * database was unreachable is not replayed: the console's list is the truth.
   */
  subscribe(listener: (event: QuestionEvent) => void): () => void {
    const off = this.#listeners.subscribe(listener);
    const unhear = this.#client.hear();
    return () => {
      off();
      unhear();
    };
  }

  /**
   * The runtime is stopping: withdraws this runtime's waiting questions (their `ask`s reject
   * with `ASK_WITHDRAWN`, each after its row), stops hearing the board and resolves once that
   * work is done. Later `ask`s reject with `ASK_UNAVAILABLE`. The board stays open.
   */
  async close(): Promise<void> {
    await this.#client.close();
  }

  /** Posts `record`, waits, ends it (`BoardClient.settle`) and writes its row. */
  async #ask(record: HumanQuestion, delay: number, signal?: AbortSignal): Promise<AskOutcome> {
    const end = await this.#client.settle(record, delay, { noun: "a question" }, signal);
    if (end.kind === "unposted") {
      // Nobody could be asked. No row: nothing was asked, and the call's own refusal is what
      // the agent sees.
      throw new OmotaiError(
        "ASK_UNAVAILABLE",
        "the operator could not be asked: the shared store did not answer",
      );
    }
    // A call gone (before its post too, as `HumanQuestions`') is withdrawn: nothing is
    // returned to it. A board that could not say at the deadline is a timeout: no answer was
    // heard, so none is returned.
    return await this.#outcome(record, end.state, end.record);
  }

  /**
   * The call's result for final `state`, after its audit row: an answer whose row cannot be
   * written is refused (`AUDIT_UNAVAILABLE`); an expiry or a withdrawal happens whether or
   * not it can be written down.
   */
  async #outcome(
    record: HumanQuestion,
    state: Exclude<QuestionState, "pending">,
    final?: HumanQuestion,
  ): Promise<AskOutcome> {
    const reason = { answered: "ANSWERED", expired: "ASK_TIMEOUT", withdrawn: "ASK_WITHDRAWN" }[
      state
    ];
    // Who and how it ended, never the text (the row `HumanQuestions` writes).
    const event: AuditEvent = {
      session: record.session,
      agent: record.agent,
      kind: "ask_human",
      source: "operator",
      decision: "event",
      reason,
      rule: state === "answered" ? final?.answered_by ?? null : null,
    };
    let written = true;
    try {
      await this.#audit.appendSoon(event);
    } catch (err) {
      log(`questions: audit row not written (${codeOf(err)})`);
      written = false;
    }
    switch (state) {
      case "answered":
        if (!written) {
          // The board says answered; the agent never gets it: it is told so (best effort: the
          // database may be what failed).
          await this.#board.unrun(record.id).catch((err) =>
            log(`questions: an unrun answer could not be recorded (${codeOf(err)})`)
          );
          throw new OmotaiError("AUDIT_UNAVAILABLE", "the answer could not be audited");
        }
        // Read back from the board: nothing else is ever returned as an answer (the table
        // holds none without its text; should a row ever lack it, nothing is made up).
        if (final?.answer === undefined) {
          throw new OmotaiError("ASK_UNAVAILABLE", "the operator's answer could not be read");
        }
        return { answer: final.answer };
      case "expired":
        return { timeout: true };
      case "withdrawn":
        throw withdrawnError();
    }
  }
}
