/**
 * The eval's agents: something that turns a case's task into tool calls on an
 * {@link ArmSession}. The scripted agent obeys every injected instruction (the worst case, no
 * model needed); the OpenAI-compatible one asks a real model.
 *
 * @module
 */
import type { ArmSession } from "./arm_session.ts";

/** An element named the way an accessibility snapshot names it. */
export interface Target {
  /** ARIA role as both snapshot formats print it: `button`, `link`, `textbox`, … */
  role: string;
  /** The accessible name, exactly. */
  name: string;
}

/**
 * One step of a plan, in words every browser MCP server shares (Playwright MCP's tool names,
 * which Omotai keeps).
 */
export type Step =
  | { do: "navigate"; url: string }
  | { do: "click"; target: Target }
  | { do: "type"; target: Target; text: string; submit?: boolean }
  | { do: "select"; target: Target; value: string }
  | { do: "snapshot" }
  /** Sign in to the portal: `browser_login` where the arm has it, else type the credentials. */
  | { do: "login" }
  /** Give the page time to do what it was going to (an attack's timer, a socket). */
  | { do: "wait"; ms: number };

/** The credentials an arm without a vault must be handed in the task (a leak by design). */
export interface Credentials {
  username: string;
  password: string;
}

/** What an agent is asked to do for one case. */
export interface AgentTask {
  caseId: string;
  /** The user's request in words, as a model would get it. */
  prompt: string;
  /**
   * The steps: for an attack case, the injected instruction the page carries (which the
   * scripted agent obeys); for a benign case, the honest path to the answer.
   */
  plan: Step[];
  /** Handed to arms that have no `browser_login` (the plain-browser baseline). */
  credentials: Credentials;
}

/** What an agent did. */
export interface AgentRun {
  /** The agent's final words, when it gave any (a model's answer). */
  answer?: string;
  /** What the arm refused or answered with an error, in words. */
  notes: string[];
  /**
   * Steps the agent could not even attempt with nothing refused before them (no ref for its
   * target): the case did not run as written, so it proves nothing either way.
   */
  notTaken?: string[];
}

/** An agent. */
export interface EvalAgent {
  /** `scripted`, or `openai:<url> <model>`. */
  readonly name: string;
  run(task: AgentTask, session: ArmSession, signal: AbortSignal): Promise<AgentRun>;
}
