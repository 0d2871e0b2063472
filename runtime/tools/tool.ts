/**
 * `defineTool()` and the wrapper every tool call runs through: validate arguments, ask the
 * gate, run the handler, map errors to stable codes, append notices and the snapshot.
 *
 * @module
 */
import type { z } from "zod";
import type { BrowserSession } from "../browser/browser_session.ts";
import { InvalidArgumentsError, OmotaiError } from "../errors.ts";
import { type ActionKind, decide, type Gate, type Verdict } from "../gate/gate.ts";
import { ResponseBuilder, type ToolResult } from "./response.ts";
import { readFacts } from "../browser/facts_reader.ts";

/** Kinds that count against `max_actions`. */
const COUNTED = new Set<ActionKind>(["navigate", "back", "click", "type", "select", "key"]);

/** What a handler gets. */
export interface ToolContext {
  session: BrowserSession;
  response: ResponseBuilder;
}

/** A browser tool. */
export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  schema: S;
  kind: ActionKind;
  /** Honest MCP hints: does it only read, can it change or destroy state? */
  readOnly: boolean;
  destructive: boolean;
  handle(ctx: ToolContext, args: z.infer<S>): Promise<void>;
}

/** Declares a tool; exists for type inference of `args`. */
export function defineTool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef<S> {
  return def;
}

/** Runs one tool call end to end; never throws. */
export async function runTool(
  tool: ToolDef,
  rawArgs: unknown,
  session: BrowserSession,
  gate: Gate,
): Promise<ToolResult> {
  const response = new ResponseBuilder();
  const parsed = tool.schema.safeParse(rawArgs ?? {});
  if (!parsed.success) {
    const message = parsed.error.issues
      .map((i) => `${i.path.length ? i.path.join(".") : "arguments"}: ${i.message}`)
      .join("; ");
    return response.error("INVALID_ARGUMENTS", `${tool.name}: ${message}`).serialize();
  }
  const args = parsed.data as Record<string, unknown>;
  return await session.exclusive(async () => {
    let verdict: Verdict;
    try {
      verdict = await decide(gate, {
        tool: tool.name,
        kind: tool.kind,
        args,
        facts: () => readFacts(session, tool.kind, args, session.counters()),
      });
    } catch (err) {
      reportError(response, session.translateError(err), tool.name);
      for (const n of session.takeNotices()) response.notice(n);
      return response.serialize();
    }
    try {
      // Recorded before anything runs: an action that cannot be audited does not run.
      session.audit({
        kind: tool.kind,
        source: "action",
        origin: verdict.about?.origin,
        method: verdict.about?.method,
        decision: verdict.decision,
        reason: verdict.decision === "allow" ? "OK" : verdict.reason,
        module: verdict.about?.module,
        rule: verdict.about?.rule,
      });
    } catch {
      verdict = { decision: "deny", reason: "AUDIT_UNAVAILABLE" };
    }
    if (verdict.decision !== "allow") {
      response.denied(verdict.reason, verdict.detail);
    } else {
      if (COUNTED.has(tool.kind)) session.countAction();
      try {
        await tool.handle({ session, response }, args);
      } catch (err) {
        reportError(response, session.translateError(err), tool.name);
      }
      if (response.wantsSnapshot) {
        try {
          response.snapshot((await session.snapshot()).text);
        } catch (err) {
          if (!response.failed) reportError(response, session.translateError(err), tool.name);
        }
      }
    }
    for (const n of session.takeNotices()) response.notice(n);
    return response.serialize();
  });
}

function reportError(response: ResponseBuilder, err: unknown, tool: string): void {
  if (err instanceof OmotaiError) {
    response.error(err.code, err.message);
    return;
  }
  // Unknown errors may carry page or argument data: log the type, tell the model only a code.
  const where = err instanceof Error ? (err.stack ?? "").split("\n").slice(1, 4).join(" ") : "";
  console.error(`omotai: ${tool} failed: ${err instanceof Error ? err.name : typeof err} ${where}`);
  response.error("INTERNAL_ERROR", "the action failed unexpectedly");
}

/** Parses a URL argument; throws `InvalidArgumentsError` for junk. */
export function parseUrlArg(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new InvalidArgumentsError(`"${url.slice(0, 200)}" is not an absolute URL`);
  }
}
