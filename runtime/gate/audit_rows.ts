/**
 * The audit rows of verdicts: one per agent action, one per network request. Rows name an
 * origin, never a path or query, and never a typed value.
 *
 * @module
 */
import type { AuditEvent } from "../store/mod.ts";
import type { ActionKind, Decision, Facts } from "../policy/mod.ts";

/** Who asks about a request. */
export interface RequestContext {
  session: string;
  agent: string | null;
  source: "request" | "proxy";
}

/** The audit row of one request verdict (origin only, never a path). */
export function requestRow(facts: Facts, ctx: RequestContext, j: Decision): AuditEvent {
  return {
    session: ctx.session,
    agent: ctx.agent,
    kind: "request",
    source: ctx.source,
    origin: facts.target?.origin ?? (facts.target ? `${facts.target.scheme}:` : null),
    method: facts.method,
    decision: j.decision,
    reason: j.reason,
    module: j.module,
    rule: j.rule,
  };
}

/**
 * The row of one agent action (session and agent are added by the session): where it
 * goes, by which method, and the verdict. Facts are missing when they could not be read.
 */
export function actionRow(
  kind: ActionKind,
  facts: Facts | undefined,
  d: Decision,
): Omit<AuditEvent, "session" | "agent"> {
  return {
    kind,
    source: "action",
    origin: facts &&
      (facts.target?.origin ?? facts.element?.link_origin ?? facts.form?.action_origin ??
        facts.frame.origin),
    method: facts && (facts.form?.submits ? facts.form.method : facts.method),
    decision: d.decision,
    reason: d.reason,
    module: d.module,
    rule: d.rule,
  };
}
