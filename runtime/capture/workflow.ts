/**
 * What a capture workflow is: fixed, reviewed code that registers something with a vendor
 * through the session's browser and returns the values the vendor minted, one per output.
 * The runtime runs it only after every output's grant passed its check; the model chooses
 * neither a selector, a URL nor a value.
 *
 * @module
 */
import type { CdpSession } from "../../cdp/mod.ts";
import type { RuntimeWriteHold } from "../login/mod.ts";

/**
 * Whether `value` looks like a minted secret worth guarding: 16 to 512 characters of a
 * token's alphabet with at least 8 distinct ones. The guard is process-wide (every session's
 * redactor and egress check), so a vendor's answer must not make an ordinary string
 * (`https://`, a word) a secret; a value that fails is neither guarded nor stored.
 */
export function secretShaped(value: unknown): value is string {
  return typeof value === "string" && /^[A-Za-z0-9_.~+=-]{16,512}$/.test(value) &&
    new Set(value).size >= 8;
}

/** What a running workflow is handed. */
export interface WorkflowContext {
  /** The session's tab. */
  page: CdpSession;
  /**
   * The capture's write hold, open for the whole workflow: each step says what it sends
   * (`expect`), exactly that leaves once, to an origin of the template, and every other write
   * of the session is refused, between steps too.
   */
  hold: RuntimeWriteHold;
  /**
   * Hides values from every output before anything else can see them (the process redactor,
   * and the egress guard for values that must never leave again): a one-time code, each
   * minted value, the moment the runtime reads it.
   */
  guard(values: readonly string[]): void;
  /** Reports the step now running (the console's progress; never a value). */
  step(name: string): void;
}

/** A workflow: its name, its outputs, where values come from, and the steps. */
export interface CaptureWorkflow<T> {
  /** The workflow's name in grants and in the tool (`github_app`). */
  name: string;
  /** The outputs it mints, each written into its own granted secret id. */
  outputs: readonly string[];
  /** The origin the values come from: what every output's grant must name. */
  origin(template: T): string;
  /**
   * The origins it reaches: while it runs, the session reaches no other (any request to one
   * is refused), and each step's hold admits its write only to one of these.
   */
  reach(template: T): string[];
  /** Runs the steps; the minted value of every output, or a `CaptureError`. */
  run(ctx: WorkflowContext, template: T): Promise<Record<string, string>>;
}
