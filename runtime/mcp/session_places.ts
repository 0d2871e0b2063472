/**
 * Places for new sessions: a runtime holds at most `max` sessions at once (one more is
 * `SERVER_BUSY`), and one agent at most its share (one more of its own is `AGENT_BUSY`, while
 * every other agent still gets in). Both count the sessions held and those still opening, so
 * opens racing for the last place get exactly the cap, and both refuse before any browser
 * starts. What is held is read from the session table at each take, never kept count of: a
 * session gone by any way (closed, swept idle, its agent removed) frees its place at once.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/** Why a session is refused for capacity. */
export type CapacityCode = "SERVER_BUSY" | "AGENT_BUSY";

/** A session refused for capacity; the client may try again later (or elsewhere). */
export class CapacityError extends OmotaiError<CapacityCode> {}

/** A place taken for a session being opened; `release` gives it back (once, idempotent). */
export interface Place {
  release(): void;
}

/** Options of `SessionPlaces`. */
export interface SessionPlacesOptions {
  /** Sessions held at once; undefined: no cap. */
  max?: number;
  /**
   * The agent (its name; undefined for a session without an agent key) of every session
   * held now. A session enters the table as its place is released, so none counts twice.
   */
  held: () => Iterable<string | undefined>;
}

/** Takes and gives back places for new sessions. */
export class SessionPlaces {
  readonly #max: number | undefined;
  readonly #held: () => Iterable<string | undefined>;
  /** Places of sessions being opened, by agent (`""`: no agent key). */
  readonly #opening = new Map<string, number>();

  constructor(options: SessionPlacesOptions) {
    this.#max = options.max;
    this.#held = options.held;
  }

  /**
   * A place for one more session of `agent`, whose share is `share` (undefined: none of its
   * own, only the runtime's cap); throws `AGENT_BUSY` when the agent holds its share (checked
   * first: it would be refused even with room), `SERVER_BUSY` when the runtime holds `max`.
   * Synchronous on purpose: nothing can take a place between the count and the taking.
   */
  take(agent: string | undefined, share: number | undefined): Place {
    const key = agent ?? "";
    let total = 0;
    for (const n of this.#opening.values()) total += n;
    let mine = this.#opening.get(key) ?? 0;
    for (const a of this.#held()) {
      total++;
      if ((a ?? "") === key) mine++;
    }
    if (agent !== undefined && share !== undefined && mine >= share) {
      throw new CapacityError(
        "AGENT_BUSY",
        `this agent holds its ${share} sessions on this runtime (max_sessions); close one or try again later`,
      );
    }
    const max = this.#max;
    if (max !== undefined && total >= max) {
      throw new CapacityError(
        "SERVER_BUSY",
        `this runtime holds its ${max} sessions; try again later or another runtime`,
      );
    }
    this.#opening.set(key, (this.#opening.get(key) ?? 0) + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#opening.get(key) ?? 1) - 1;
        if (left > 0) this.#opening.set(key, left);
        else this.#opening.delete(key);
      },
    };
  }
}
