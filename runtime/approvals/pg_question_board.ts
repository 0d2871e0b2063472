/**
 * Operator questions shared by every runtime of a tenant, in PostgreSQL (`questions`, under
 * row-level security), as approvals are (`pg_approval_board.ts`): one runtime posts the
 * question its agent's `ask_human` (or a login's push challenge) waits on; the operator
 * answers it on any runtime's console or API; the asking runtime hears of the answer within a
 * second (`LISTEN`/`NOTIFY`, and a poll behind it in case a notification is lost).
 *
 * Every change of state is one conditional update (`WHERE state = 'pending'`, and for an
 * answer `AND expires_at > now()`): of an answer on one runtime, another on a second and the
 * asker's own timeout, exactly one wins, and the others learn they lost (`not_pending`). A
 * trigger keeps a finished question finished and lets nothing but its outcome change.
 * Notifications carry the question's random id only, never its text or the answer: a
 * listener of another tenant learns nothing it could read.
 *
 * @module
 */
import { BoardSignals } from "./board_signals.ts";
import type { PgDatabase } from "../store/pg_database.ts";
import {
  type AnswerResult,
  type HumanQuestion,
  QUESTION_MAX_CHARS,
  type QuestionState,
} from "./questions.ts";

/** The channel every runtime listens on. */
export const QUESTIONS_CHANNEL = "omotai_questions";

/** How often a waiting runtime looks, in case a notification was lost (default). */
export const QUESTION_POLL_MS = 500;

/** Finished questions `list("finished")` returns, newest first. */
export const QUESTIONS_HISTORY = 200;

/** What a question id looks like (ours are UUIDs): anything else on the channel is ignored. */
const ID = /^[A-Za-z0-9_-]{1,64}$/;

interface Row {
  id: string;
  agent: string | null;
  session: string | null;
  question: string;
  answer: string | null;
  created_at: Date;
  expires_at: Date;
  state: QuestionState;
  answered_at: Date | null;
  answered_by: string | null;
}

/**
 * `text` as the table keeps a question or an answer: cut to `QUESTION_MAX_CHARS` (never in
 * the middle of a surrogate pair), NUL (which PostgreSQL's text cannot hold) made U+FFFD.
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

/** Who answered, as kept: 40 characters at most, no NUL. */
function byText(by: string): string {
  return questionText(by.slice(0, 40)).slice(0, 40);
}

/** One tenant's questions, as one runtime sees and changes them. */
export class PgQuestionBoard implements AsyncDisposable {
  readonly tenant: string;
  readonly #db: PgDatabase;
  readonly #runtime: string;
  readonly #signals: BoardSignals;
  #unlisten: (() => Promise<void>) | undefined;

  private constructor(db: PgDatabase, tenant: string, runtime: string, pollMs: number) {
    this.#db = db;
    this.tenant = tenant;
    this.#runtime = runtime;
    this.#signals = new BoardSignals("questions", pollMs);
  }

  /** A board for `tenant`, listening for changes made by any runtime. */
  static async open(
    db: PgDatabase,
    tenant: string,
    options: { runtime: string; pollMs?: number },
  ): Promise<PgQuestionBoard> {
    const board = new PgQuestionBoard(
      db,
      tenant,
      options.runtime,
      options.pollMs ?? QUESTION_POLL_MS,
    );
    board.#unlisten = await db.listen(QUESTIONS_CHANNEL, (id) => board.#notified(id));
    return board;
  }

  /**
   * Posts a pending question (`record.state` must be `pending`; its text is kept as
   * {@link questionText} makes it). Rejects with `DB_UNAVAILABLE` when the database refuses.
   */
  async post(record: HumanQuestion): Promise<void> {
    await this.#db.tenant(this.tenant, async (tx) => {
      await tx`INSERT INTO questions (tenant_id, id, runtime, agent, session, question,
          created_at, expires_at, state)
        VALUES (${this.tenant}, ${record.id}, ${this.#runtime}, ${record.agent},
          ${record.session}, ${questionText(record.question)}, ${record.created_at},
          ${record.expires_at}, 'pending')`;
      await tx`SELECT pg_notify(${QUESTIONS_CHANNEL}, ${record.id})`;
    });
  }

  /**
   * The operator's answer to `id` (cut to `QUESTION_MAX_CHARS`); `by` names the door
   * (`console`, `api`). `ok` when it won, `not_pending` when the question was already
   * answered, expired or withdrawn (or its time ran out), `unknown` when this tenant has none.
   */
  async answer(id: string, text: string, by: string): Promise<AnswerResult> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const won = await tx`UPDATE questions
        SET state = 'answered', answer = ${questionText(text)}, answered_at = now(),
          answered_by = ${byText(by)}
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'pending'
          AND expires_at > now()
        RETURNING id`;
      if (won.length > 0) {
        await tx`SELECT pg_notify(${QUESTIONS_CHANNEL}, ${id})`;
        return "ok";
      }
      const found = await tx`SELECT 1 FROM questions WHERE tenant_id = ${this.tenant}
        AND id = ${id}`;
      return found.length > 0 ? "not_pending" : "unknown";
    });
  }

  /**
   * Ends a pending question as `expired` or `withdrawn` (the asker's timeout, its agent's
   * call gone); true when that won over any answer.
   */
  async finish(id: string, state: "expired" | "withdrawn"): Promise<boolean> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const won = await tx`UPDATE questions SET state = ${state}, answered_at = now()
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'pending' RETURNING id`;
      if (won.length > 0) await tx`SELECT pg_notify(${QUESTIONS_CHANNEL}, ${id})`;
      return won.length > 0;
    });
  }

  /**
   * Records an answered `id` as withdrawn because its answer never reached the agent (the
   * asking runtime could not keep its audit row); the answer's text is dropped. True when it
   * changed.
   */
  async unrun(id: string): Promise<boolean> {
    return await this.#db.tenant(this.tenant, async (tx) => {
      const changed = await tx`UPDATE questions SET state = 'withdrawn', answer = NULL,
          answered_by = 'audit-unavailable'
        WHERE tenant_id = ${this.tenant} AND id = ${id} AND state = 'answered' RETURNING id`;
      if (changed.length > 0) await tx`SELECT pg_notify(${QUESTIONS_CHANNEL}, ${id})`;
      return changed.length > 0;
    });
  }

  /** Question `id` of this tenant, or undefined. */
  async get(id: string): Promise<HumanQuestion | undefined> {
    const [row] = await this.#db.tenant(
      this.tenant,
      (tx) => tx<Row[]>`SELECT * FROM questions WHERE tenant_id = ${this.tenant} AND id = ${id}`,
    );
    return row ? question(row) : undefined;
  }

  /**
   * The tenant's questions of every runtime: pending ones (still within their time), oldest
   * first; or the last `QUESTIONS_HISTORY` finished ones (answered, expired, withdrawn),
   * newest first.
   */
  async list(which: "pending" | "finished" = "pending"): Promise<HumanQuestion[]> {
    const rows = await this.#db.tenant(
      this.tenant,
      (tx) =>
        which === "pending"
          ? tx<Row[]>`SELECT * FROM questions WHERE tenant_id = ${this.tenant}
            AND state = 'pending' AND expires_at > now() ORDER BY created_at, id`
          : tx<Row[]>`SELECT * FROM questions WHERE tenant_id = ${this.tenant}
            AND state <> 'pending' ORDER BY answered_at DESC, id LIMIT ${QUESTIONS_HISTORY}`,
    );
    return rows.map(question);
  }

  /**
   * Resolves with question `id` once it is no longer pending (answered on any runtime, or
   * ended), woken by its notification or, failing that, by the poll; rejects when `signal`
   * aborts or the database cannot be reached.
   */
  async settled(id: string, signal?: AbortSignal): Promise<HumanQuestion> {
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
   * Calls `listener` with the id of every question a notification names: posted, answered,
   * expired or withdrawn on any runtime (the console's live view reads it back with `get`).
   * The channel is shared by every tenant, so an id may be another tenant's: `get` then finds
   * nothing, which is the wall. Notifications lost while the listening connection was down
   * are not replayed. Returns the function that removes the listener.
   */
  onChange(listener: (id: string) => void): () => void {
    return this.#signals.onChange(listener);
  }

  #notified(id: string): void {
    // Not an id of ours (anyone may NOTIFY): nothing to read back.
    if (!ID.test(id)) return;
    this.#signals.notified(id);
  }

  /** Stops listening; waiting calls go on by polling until they settle. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#unlisten?.();
  }
}

/** A row as the console lists it (the shape `HumanQuestions` lists). */
function question(row: Row): HumanQuestion {
  return {
    id: row.id,
    agent: row.agent,
    session: row.session,
    question: row.question,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    state: row.state,
    ...(row.answer !== null ? { answer: row.answer } : {}),
    // As `HumanQuestions`: only an answered question has an answer's time and author.
    ...(row.state === "answered" && row.answered_at
      ? { answered_at: row.answered_at.toISOString() }
      : {}),
    ...(row.answered_by !== null ? { answered_by: row.answered_by } : {}),
  };
}
