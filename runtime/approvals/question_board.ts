/**
 * Questions an agent asks the operator (`ask_human`; a login's push challenge is one too,
 * `cli/push_channel.ts`): the `HumanChannel` and the console's port, one kind of the decision
 * board (`DecisionBoard`). Listed on the console (every runtime's, on a shared store),
 * answered there or through the API, or timed out. Audit rows record that a question was
 * asked and how it ended (`ANSWERED` naming the door, `ASK_TIMEOUT`, `ASK_WITHDRAWN`), never
 * its text or the answer: either can carry anything.
 *
 * Never a fabricated answer: the only answer `ask` returns is one read back from the store,
 * and only once its `ANSWERED` row is written (else `AUDIT_UNAVAILABLE`, and the store records
 * the question withdrawn). A post the store refuses REJECTS with `ASK_UNAVAILABLE` at once:
 * nobody could be asked, and a `{timeout: true}` would tell the model (or a login's push,
 * `PUSH_TIMEOUT`) that the operator saw it and did not answer.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
import {
  type DecisionStore,
  type HumanQuestion,
  questionText,
  type SettleResult,
} from "../store/mod.ts";
import type { BoardAudit, DecisionBoardOptions, DecisionKindRules } from "./decision_board.ts";
import { DecisionBoard, waitMs } from "./decision_board.ts";

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

/** A question's rules on the board: its audit rows, who and how it ended, never the text. */
const RULES: DecisionKindRules<"question", QuestionEvent, "answered"> = {
  noun: "a question",
  // Answered, expired and withdrawn ones alike.
  finished: "answered",
  event: (question) => ({
    type: question.state === "pending" ? "added" : question.state,
    question,
  }),
  acted: "answered",
  row: (record, state, final) => ({
    session: record.session,
    agent: record.agent,
    kind: "ask_human",
    source: "operator",
    decision: "event",
    reason: { answered: "ANSWERED", expired: "ASK_TIMEOUT", withdrawn: "ASK_WITHDRAWN" }[state],
    rule: state === "answered" ? final?.answered_by ?? null : null,
  }),
};

function withdrawnError(): OmotaiError {
  return new OmotaiError("ASK_WITHDRAWN", "the question was withdrawn: the call was cancelled");
}

/**
 * The questions of one runtime, over its questions' store (`list`, `subscribe` and `close`
 * are the board's: a closed board withdraws its waiting questions, whose `ask`s reject with
 * `ASK_WITHDRAWN`, and refuses later ones with `ASK_UNAVAILABLE`).
 */
export class QuestionBoard extends DecisionBoard<"question", QuestionEvent, "answered"> {
  /** `audit` receives one row per outcome of this runtime's questions (never their text). */
  constructor(store: DecisionStore<"question">, audit: BoardAudit, options?: DecisionBoardOptions) {
    super(store, audit, RULES, options);
  }

  /**
   * Posts the question and waits up to `timeoutMs` for an answer (given on any runtime of a
   * shared store). Rejects with `ASK_WITHDRAWN` when `signal` aborts (or the runtime
   * closes), `ASK_UNAVAILABLE` when the question could not be posted (or the runtime is
   * closed), `AUDIT_UNAVAILABLE` when an answer came but its row could not be written.
   */
  async ask(request: AskRequest, timeoutMs: number, signal?: AbortSignal): Promise<AskOutcome> {
    const now = this.now();
    const delay = waitMs(timeoutMs);
    if (this.closed) {
      throw new OmotaiError(
        "ASK_UNAVAILABLE",
        "the runtime is stopping: the operator cannot be asked",
      );
    }
    const end = await this.run(
      {
        id: crypto.randomUUID(),
        agent: request.agent,
        session: request.session,
        question: questionText(request.question),
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + delay).toISOString(),
        state: "pending",
      },
      delay,
      signal,
    );
    if (end.kind === "unposted") {
      // No row: nothing was asked, and the call's own refusal is what the agent sees.
      throw new OmotaiError(
        "ASK_UNAVAILABLE",
        "the operator could not be asked: the store did not answer",
      );
    }
    switch (end.state) {
      case "answered":
        if (!end.written) {
          throw new OmotaiError("AUDIT_UNAVAILABLE", "the answer could not be audited");
        }
        // Read back from the store: nothing else is ever returned as an answer.
        if (end.record?.answer === undefined) {
          throw new OmotaiError("ASK_UNAVAILABLE", "the operator's answer could not be read");
        }
        return { answer: end.record.answer };
      case "expired":
        return { timeout: true };
      case "withdrawn":
        throw withdrawnError();
    }
  }

  /**
   * The operator's answer to question `id` (cut to `QUESTION_MAX_CHARS`); `by` names the door
   * (`console`, `api`). `not_pending` when already answered, expired or withdrawn.
   */
  async answer(id: string, text: string, by: string): Promise<SettleResult> {
    return await this.outcome(id, { state: "answered", answer: text, by });
  }
}
