/**
 * One ordered teardown for everything a start makes. Each resource is registered with
 * `defer()` the moment it exists, so whatever a start has made by the time it fails (or the
 * runtime ends) is undone: in reverse order of registration, each step bounded in time, each
 * error logged and never thrown past the next step.
 *
 * @module
 */
import { log } from "../mod.ts";
import { SHUTDOWN_TIMEOUT_MS } from "./shutdown.ts";

/** One registered step. */
interface Step {
  name: string;
  fn: () => unknown;
  timeoutMs: number;
}

/** Steps run last-registered first; `run()` runs them once, however often it is called. */
export class Teardown implements AsyncDisposable {
  readonly #steps: Step[] = [];
  readonly #onDefer: ((name: string) => void) | undefined;
  #running: Promise<void> | undefined;
  /** Set once a run has emptied the steps. */
  #finished = false;

  /** `onDefer` (tests) sees each step's name once it is registered, and may throw. */
  constructor(options: { onDefer?: (name: string) => void } = {}) {
    this.#onDefer = options.onDefer;
  }

  /**
   * Registers `fn` to run at teardown under `name` (named in the log when it fails or
   * outlasts `timeoutMs`, then the next step runs). A step registered while the teardown
   * runs (or after) runs too, so nothing made late is left behind.
   */
  defer(name: string, fn: () => unknown, timeoutMs = SHUTDOWN_TIMEOUT_MS): void {
    const step = { name, fn, timeoutMs };
    this.#steps.push(step);
    // After the run: at once (during it, the run picks the step up next).
    if (this.#finished) this.run().catch(() => {});
    this.#onDefer?.(name);
  }

  /** The names of the steps not yet run, in the order they will run. */
  get pending(): string[] {
    return this.#steps.map((s) => s.name).reverse();
  }

  /** Runs every step, last registered first; concurrent callers share one run. */
  run(): Promise<void> {
    if (this.#finished) this.#running = this.#drain();
    return this.#running ??= this.#drain();
  }

  async #drain(): Promise<void> {
    const previous = this.#running;
    this.#finished = false;
    await previous;
    while (this.#steps.length > 0) await runStep(this.#steps.pop()!);
    this.#finished = true;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.run();
  }
}

async function runStep(step: Step): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) =>
    timer = setTimeout(() => r("timeout"), step.timeoutMs)
  );
  try {
    const outcome = await Promise.race([Promise.resolve().then(step.fn), timeout]);
    if (outcome === "timeout") log(`shutdown: ${step.name}: not done within ${step.timeoutMs} ms`);
  } catch (err) {
    log(`shutdown: ${step.name}: ${(err as Error)?.name ?? "error"}`);
  } finally {
    clearTimeout(timer);
  }
}
