/**
 * `defineTool()` and what a tool declares together: its schema, how it finds its target,
 * the facts the gate judges, and its handler (a write it causes is held and shown to a
 * human where it leaves, not here). The
 * pipeline that runs them is `pipeline.ts`.
 *
 * @module
 */
import type { z } from "zod";
import type { BrowserSession } from "../browser/mod.ts";
import { InvalidArgumentsError } from "../mod.ts";
import type { CdpSession } from "../../cdp/mod.ts";
import type { CaptureAuditRow, CaptureOutcome, CaptureRequest } from "../capture/mod.ts";
import type { Gate } from "../gate/mod.ts";
import type { LoginPlan, LoginSecrets, PushChannel } from "../login/mod.ts";
import type { ActionKind, Facts } from "../policy/mod.ts";
import type { ResponseBuilder } from "./response.ts";

/** Operator settings tools obey (from the policy file); the model cannot change them. */
export interface ToolSettings {
  /** Absolute directory files may be uploaded from; none means uploads are refused. */
  uploadDir?: string;
  /** Whether `browser_take_screenshot` may run at all. */
  screenshots: boolean;
  /** How long `ask_human` waits for the operator (the policy's `confirm_timeout_seconds`). */
  askTimeoutMs: number;
  /**
   * Whether the model's text may land in a password field (the policy's
   * `model_may_type_passwords`); absent means no: `PASSWORD_FIELD`.
   */
  modelMayTypePasswords?: boolean;
  /**
   * What actions answer with unless a call says (the policy's `views.action_answer`):
   * the page card when absent (`answer.ts`).
   */
  actionAnswer?: "card" | "overview";
}

/** Settings of a runtime whose policy says nothing: no uploads, no screenshots. */
export const DEFAULT_TOOL_SETTINGS: Readonly<ToolSettings> = {
  screenshots: false,
  askTimeoutMs: 120_000,
};

/** Where `ask_human` reaches the operator (the console); none in a runtime without one. */
export interface HumanChannel {
  ask(
    q: { question: string; agent: string | null; session: string },
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<{ answer: string } | { timeout: true }>;
}

/**
 * The runtime's side of `browser_login` (built in `cli/start.ts` from the grant store and the
 * vault): redeems the grants bound to an agent for an origin read from CDP, and hands back
 * the values with the plan that limits where they may be typed. Refusals throw coded errors
 * (`GRANT_EXPIRED`, `GRANT_WRONG_ORIGIN`, `VAULT_UNAVAILABLE`...).
 */
export interface LoginService {
  redeem(req: {
    agent: string | null;
    sessionId: string;
    origin: string;
    grantIds?: readonly string[];
  }): Promise<{ plan: LoginPlan; secrets: LoginSecrets }>;
  /** The operator's console for push challenges, if there is one. */
  push?(session: { id: string; agent: string | null }): PushChannel | undefined;
  /** `session`: a browser_login taints the session first, whatever its outcome. */
  taintAfterLogin: "session" | "none";
  /**
   * The policy's startup login, run before a session's first call: its status line for the
   * agent the first time, undefined after.
   */
  startup?(session: BrowserSession): Promise<string | undefined>;
}

/**
 * The runtime's side of `browser_capture_credentials` (built in `cli/capture_service.ts` from
 * the grants, the vault and the policy's templates): runs a reviewed workflow whose minted
 * values go straight into the vault under the grants the operator approved.
 */
export interface CaptureService {
  /** The page a workflow starts on (the gate judges going there); undefined: no template. */
  startUrl(workflow: string): string | undefined;
  /** Runs the capture on `page`; never throws (the outcome is a status). */
  capture(
    page: CdpSession,
    request: CaptureRequest,
    session: {
      audit(row: CaptureAuditRow): void;
      progress(line: string): void;
      /** Runs `fn` when the session ends (the capture's confinement is let go there). */
      onEnd(fn: () => void): void;
    },
  ): Promise<CaptureOutcome>;
}

/**
 * What a tool call runs against: one bag, built once per connection (`cli/connections.ts`)
 * and passed as it is to the MCP server (`createMcpServer`), the pipeline (`runTool`, with
 * the call's `signal`) and every tool's functions (`ToolContext`, with the call's response).
 * Nothing copies it field by field: a new service is a field here and a line where the
 * connection is built.
 */
export interface ToolDeps {
  session: BrowserSession;
  /** Judges every action's facts; only the pipeline asks it, before the tool's handler. */
  gate: Gate;
  /** The policy's settings; absent: {@link DEFAULT_TOOL_SETTINGS}. */
  settings?: Readonly<ToolSettings>;
  /** The operator's console, for ask_human. */
  human?: HumanChannel;
  /** Credentials for browser_login; none in a runtime without a vault. */
  login?: LoginService;
  /** Generated-credential capture; none in a runtime without a vault. */
  capture?: CaptureService;
  /** Aborts when the client cancels the call or goes away. */
  signal?: AbortSignal;
}

/** What a tool's functions get: the call's deps, its settings resolved, the response it fills. */
export interface ToolContext extends ToolDeps {
  settings: Readonly<ToolSettings>;
  response: ResponseBuilder;
}

/** A browser tool: its schema, its facts and its handler, declared together. */
export interface ToolDef<S extends z.ZodObject = z.ZodObject, T = undefined> {
  name: string;
  title: string;
  description: string;
  schema: S;
  kind: ActionKind;
  /** Honest MCP hints: does it only read, can it change or destroy state? */
  readOnly: boolean;
  destructive: boolean;
  /** Finds what the call acts on (an element by ref), once for facts and handler alike. */
  resolve?(ctx: ToolContext, args: z.infer<S>): Promise<T>;
  /**
   * The facts the gate judges, read from the browser. A call acting on several elements
   * (a form of fields) gives one set per element: each is judged and audited, and the call
   * runs only if every one is allowed.
   */
  facts(ctx: ToolContext, args: z.infer<S>, target: T): Promise<Facts | Facts[]>;
  /** Whether the tool may run while a dialog is open (others are refused with DIALOG_OPEN). */
  runsBesideDialog?: boolean;
  /**
   * Whether the tool leaves the current tab's page (a navigation, closing it): it runs while
   * a dialog is open, which it answers first through `WedgeGuard.leave` (audited).
   */
  leavesDialog?: boolean;
  /** Runs the allowed action and fills the response. */
  handle(ctx: ToolContext, args: z.infer<S>, target: T): Promise<void>;
}

/** Any tool, as the registry holds them. */
export type AnyTool = ToolDef<z.ZodObject, unknown>;

/** Declares a tool; exists for type inference of `args` and the resolved target. */
export function defineTool<S extends z.ZodObject, T = undefined>(
  def: ToolDef<S, T>,
): ToolDef<S, T> {
  return def;
}

/** Parses a URL argument; throws `InvalidArgumentsError` for junk. */
export function parseUrlArg(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new InvalidArgumentsError(`"${url.slice(0, 200)}" is not an absolute URL`);
  }
}
