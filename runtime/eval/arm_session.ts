/**
 * One agent's connection to one arm (an MCP server under test), as the eval's agents see it:
 * the arm's tools and a call that returns the text the model would receive. Every call's
 * result is counted and kept, so the runner can search all of it for planted secrets.
 *
 * @module
 */

/** A tool as the arm lists it (`tools/list`). */
export interface ArmTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments, as the arm sent it. */
  inputSchema: Record<string, unknown>;
}

/** What one tool call returned. */
export interface ToolOutcome {
  /** Every text content part joined with `\n`; other parts (images) as their raw data. */
  text: string;
  isError: boolean;
  /**
   * The arm gave no answer at all (it died, closed the connection or ran out of time): not a
   * refusal, and a case with one proves nothing.
   */
  noAnswer?: boolean;
}

/** An open connection to one arm for one case. */
export interface ArmSession {
  /** The arm's name (`omotai`, `playwright`, …). */
  readonly arm: string;
  readonly tools: readonly ArmTool[];
  /** Calls `tool`; a protocol error comes back as an `isError` outcome, never a throw. */
  call(tool: string, args: Record<string, unknown>): Promise<ToolOutcome>;
}
