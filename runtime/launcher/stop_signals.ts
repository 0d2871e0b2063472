/**
 * The one rule for the signals that stop omotai, kept here for both of its processes (the
 * launcher and the runtime it runs):
 *
 * - The first SIGTERM, SIGINT or SIGHUP starts the ordered teardown (sessions and their
 *   browsers, servers, the proxy and its sockets, the `runtime_stopped` row, the final
 *   signed checkpoint, the database).
 * - Any further one within `STOP_GRACE_MS` of the first is the same stop reaching the
 *   process again, and is ignored (one log line says so). A stop commonly arrives twice:
 *   systemd's default `KillMode=control-group` and `kill -TERM -PGID` signal every process
 *   of the group, so the runtime gets the signal directly and once more relayed by the
 *   launcher; a client that closes stdin and sends SIGTERM does the same.
 * - One after the grace period is a deliberate second stop: the process exits at once
 *   (128 + the signal's number), skipping what is left of the teardown. SIGKILL, which no
 *   process sees, does the same.
 * - The launcher relays a stop once, and a later one only when it forces; then it waits for
 *   the runtime's exit code and exits with it.
 *
 * The grace period is 3 s: a relay is one turn of the launcher's event loop (milliseconds,
 * well under a second on a loaded machine), while a person or supervisor that signals again
 * on purpose has seen the first one go unanswered for longer than that; and it is well
 * inside the teardown's own bound (`SHUTDOWN_TIMEOUT_MS`), so a forcing signal still has
 * something to cut short.
 *
 * @module
 */

/** The signals that stop omotai gracefully. */
export const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/** One of `STOP_SIGNALS`. */
export type StopSignal = typeof STOP_SIGNALS[number];

/** How long after the first stop signal a further one is taken for the same stop. */
export const STOP_GRACE_MS = 3_000;

const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/** What a stop signal means, by the rule above. */
export type StopVerdict =
  /** The first: start the ordered teardown. */
  | { kind: "stop"; signal: StopSignal }
  /** Within the grace period of the first: the same stop again; ignore it. */
  | { kind: "repeat"; signal: StopSignal; afterMs: number }
  /** After the grace period: exit now with `code`. */
  | { kind: "force"; signal: StopSignal; code: number };

/** What the rule needs besides the signals (tests pass a clock). */
export interface StopRuleOptions {
  now?: () => number;
  graceMs?: number;
}

/** The rule, as one process sees its stop signals arrive. */
export class StopRule {
  readonly #now: () => number;
  readonly #graceMs: number;
  #first: number | undefined;

  constructor(options: StopRuleOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#graceMs = options.graceMs ?? STOP_GRACE_MS;
  }

  /** Whether a stop signal has arrived. */
  get stopping(): boolean {
    return this.#first !== undefined;
  }

  /** Judges one arriving signal. */
  judge(signal: StopSignal): StopVerdict {
    const now = this.#now();
    if (this.#first === undefined) {
      this.#first = now;
      return { kind: "stop", signal };
    }
    const afterMs = now - this.#first;
    if (afterMs < this.#graceMs) return { kind: "repeat", signal, afterMs };
    return { kind: "force", signal, code: 128 + SIGNAL_NUMBERS[signal] };
  }
}

/**
 * Listens for `STOP_SIGNALS` and hands each one's verdict to `onVerdict`; returns what
 * removes the listeners. Signals a platform lacks (Windows has no SIGTERM or SIGHUP) are
 * skipped.
 */
export function listenForStop(
  rule: StopRule,
  onVerdict: (verdict: StopVerdict) => void,
): Disposable {
  const added: [StopSignal, () => void][] = [];
  for (const signal of STOP_SIGNALS) {
    const listener = () => onVerdict(rule.judge(signal));
    try {
      Deno.addSignalListener(signal, listener);
      added.push([signal, listener]);
    } catch {
      // Not every platform has every signal.
    }
  }
  return {
    [Symbol.dispose]: () => {
      for (const [signal, listener] of added) Deno.removeSignalListener(signal, listener);
    },
  };
}
