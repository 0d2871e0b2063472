/**
 * What a session has done so far: the counters policy facts carry (actions, confirmations,
 * elapsed time) and taint. Taint only ever goes on: nothing in a session clears it.
 *
 * @module
 */
import type { SessionCounters } from "../policy/mod.ts";

/** Counters and taint of one session. */
export class SessionState {
  readonly #startedAt: number;
  #actionsUsed = 0;
  #confirmationsUsed = 0;
  #taint: string | undefined;
  #activity: string | undefined;

  constructor(now: number = Date.now()) {
    this.#startedAt = now;
  }

  /** When the session started (ms since the epoch). */
  get startedAt(): number {
    return this.#startedAt;
  }

  /** Whether the session is tainted (a credential was used in it). */
  get tainted(): boolean {
    return this.#taint !== undefined;
  }

  /** Why the session was first tainted, e.g. `login`; undefined while clean. */
  get taintReason(): string | undefined {
    return this.#taint;
  }

  /**
   * What the runtime is doing for the session beyond a tool call's own work (a credential
   * capture's step), for the console; never a value. Undefined when nothing runs.
   */
  get activity(): string | undefined {
    return this.#activity;
  }

  /** Sets or clears the session's activity line. */
  setActivity(line: string | undefined): void {
    this.#activity = line;
  }

  /** Marks the session tainted until teardown; the first reason is kept. */
  taint(reason: string): void {
    this.#taint ??= reason;
  }

  /** Records one allowed agent action (those that count against `max_actions`). */
  countAction(): void {
    this.#actionsUsed++;
  }

  /** Records one approved confirmation (counts against `max_confirmations`). */
  countConfirmation(): void {
    this.#confirmationsUsed++;
  }

  /** The counters the policy facts carry, as of now. */
  counters(now: number = Date.now()): SessionCounters {
    return {
      tainted: this.tainted,
      actionsUsed: this.#actionsUsed,
      secondsElapsed: Math.max(0, (now - this.#startedAt) / 1000),
      confirmationsUsed: this.#confirmationsUsed,
    };
  }
}
