/**
 * Module verdicts and how they combine: deny beats confirm beats allow, no allow means
 * deny, a classifier's allow counts for nothing, and the result does not depend on module
 * order or duplicates.
 *
 * @module
 */
import { z } from "zod";
import type { Decision } from "./decision.ts";

/** A verdict as a module returns it. */
export const ModuleOutputSchema = z.strictObject({
  decision: z.enum(["allow", "deny", "confirm"]),
  reason: z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/),
  rule: z.string().max(200).optional(),
});

/** A parsed module output. */
export type ModuleOutput = z.infer<typeof ModuleOutputSchema>;

/** Rule modules may allow; classifier (semantic) modules may only deny or confirm. */
export type ModuleKind = "rule" | "classifier";

/** One module's verdict, labelled with where it came from. */
export interface ModuleVerdict extends ModuleOutput {
  module: string;
  kind: ModuleKind;
}

/** Parses a module's raw output; anything malformed is a `POLICY_ERROR` deny. */
export function parseModuleOutput(text: string | null | undefined): ModuleOutput {
  try {
    const parsed = ModuleOutputSchema.safeParse(JSON.parse(text ?? ""));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through
  }
  return { decision: "deny", reason: "POLICY_ERROR", rule: "malformed module output" };
}

const RANK = { deny: 3, confirm: 2, allow: 1 } as const;

/** Combines verdicts; see the module doc for the rules. */
export function combine(verdicts: readonly ModuleVerdict[]): Decision {
  const counted = verdicts.filter((v) => !(v.kind === "classifier" && v.decision === "allow"));
  if (counted.length === 0) return { decision: "deny", reason: "NO_POLICY_ALLOWED" };
  const top = Math.max(...counted.map((v) => RANK[v.decision]));
  // Among equals, a fixed order keeps the answer independent of module order.
  const winner = counted
    .filter((v) => RANK[v.decision] === top)
    .sort((a, b) => key(a).localeCompare(key(b)))[0];
  return {
    decision: winner.decision,
    reason: winner.reason,
    module: winner.module,
    ...(winner.rule !== undefined ? { rule: winner.rule } : {}),
  };
}

function key(v: ModuleVerdict): string {
  return `${v.reason}\u0000${v.module}\u0000${v.rule ?? ""}`;
}
