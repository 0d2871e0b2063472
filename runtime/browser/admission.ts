/**
 * Admission for the work that takes every core: browser launches, and page loads with the
 * snapshot after them. A few run at once; the rest wait their turn in arrival order. Twenty
 * browsers launched at once on two cores each take so long that every one runs past its
 * start bound, and twenty heavy pages loaded at once each run past the browser's answer
 * bound; the same twenty in turn all finish, and the machine does the same work in the same
 * time. A turn that does not come within `maxWaitMs` is refused: never an unbounded wait.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/** How an admission admits. */
export interface AdmissionOptions {
  /** At once (at least 1). */
  slots: number;
  /** How long one may wait for its turn (default {@link ADMISSION_WAIT_MS}). */
  maxWaitMs?: number;
  /** The refusal when no turn came in time (`waitedMs`), or the admission closed (none). */
  refusal(waitedMs?: number): OmotaiError;
}

/** The default wait for a turn: twenty launches or loads in turn on two cores, with room. */
export const ADMISSION_WAIT_MS = 180_000;

/** Launches at once on a machine with `cores` cores: one per core, at least one. */
export function launchSlots(cores: number): number {
  return Math.max(1, Math.floor(cores));
}

/**
 * Page loads at once on a machine with `cores` cores: two per core (a load also waits on the
 * network and the runtime's verdicts), at least two.
 */
export function loadSlots(cores: number): number {
  return Math.max(2, 2 * Math.floor(cores));
}

interface Waiter {
  admit(): void;
  refuse(err: OmotaiError): void;
  timer: ReturnType<typeof setTimeout>;
}

/** Runs work at most `slots` at once, in arrival order. */
export class Admission implements Disposable {
  readonly #slots: number;
  readonly #maxWaitMs: number;
  readonly #refusal: AdmissionOptions["refusal"];
  readonly #queue: Waiter[] = [];
  #running = 0;
  #closed = false;

  constructor(options: AdmissionOptions) {
    this.#slots = Math.max(1, Math.floor(options.slots));
    this.#maxWaitMs = options.maxWaitMs ?? ADMISSION_WAIT_MS;
    this.#refusal = options.refusal;
  }

  /** Running now. */
  get running(): number {
    return this.#running;
  }

  /** Waiting for their turn. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Runs `work` in its turn; the slot is free again when it settles, however it ends. Throws
   * the refusal when no turn came within the wait or the admission closed, and `CANCELLED`
   * when `signal` aborted while it waited; `work` then never ran.
   */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#turn(signal);
    try {
      return await work();
    } finally {
      this.#running--;
      this.#next();
    }
  }

  /** Refuses everyone waiting and anyone later; what runs finishes. */
  [Symbol.dispose](): void {
    this.#closed = true;
    for (const w of this.#queue.splice(0)) {
      clearTimeout(w.timer);
      w.refuse(this.#refusal());
    }
  }

  #turn(signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(this.#refusal());
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.#running < this.#slots && this.#queue.length === 0) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const leave = (err: OmotaiError) => {
        const at = this.#queue.indexOf(waiter);
        if (at >= 0) this.#queue.splice(at, 1);
        clearTimeout(waiter.timer);
        signal?.removeEventListener("abort", onAbort);
        reject(err);
      };
      const onAbort = () => leave(cancelled());
      const waiter: Waiter = {
        admit: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        refuse: (err) => leave(err),
        timer: setTimeout(() => leave(this.#refusal(this.#maxWaitMs)), this.#maxWaitMs),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #next(): void {
    while (this.#running < this.#slots) {
      const waiter = this.#queue.shift();
      if (!waiter) return;
      clearTimeout(waiter.timer);
      this.#running++;
      waiter.admit();
    }
  }
}

function cancelled(): OmotaiError {
  return new OmotaiError("CANCELLED", "the call ended while it waited for its turn");
}

/** Admits browser launches, one per core (refused as `BROWSER_LAUNCH_FAILED`). */
export function launchAdmission(cores: number, maxWaitMs?: number): Admission {
  return new Admission({
    slots: launchSlots(cores),
    maxWaitMs,
    refusal: (waited) =>
      new OmotaiError(
        "BROWSER_LAUNCH_FAILED",
        waited === undefined
          ? "the runtime is shutting down"
          : `no browser could be started within ${
            Math.round(waited / 1000)
          } s: the machine is busy starting others; try again`,
      ),
  });
}

/** Admits page loads, two per core (refused as `SERVER_BUSY`). */
export function loadAdmission(cores: number, maxWaitMs?: number): Admission {
  return new Admission({
    slots: loadSlots(cores),
    maxWaitMs,
    refusal: (waited) =>
      new OmotaiError(
        "SERVER_BUSY",
        waited === undefined
          ? "the runtime is shutting down"
          : `the page was not loaded: no turn within ${
            Math.round(waited / 1000)
          } s on this busy machine; try again`,
      ),
  });
}
