/**
 * `omotai policy test`: runs a table of facts against expected verdicts, like OPA's test
 * runner. Facts in a case are partial: they are merged over a neutral default and then
 * normalized exactly as the runtime normalizes facts read from the browser (origins
 * lowercased without default ports, paths canonical).
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { PolicyFileError } from "../mod.ts";
import { PolicyEngine } from "./engine.ts";
import { baseFacts, FRESH_SESSION } from "./fact_builders.ts";
import { type Facts, FactsSchema } from "./facts.ts";
import { canonicalPath, normalizeOrigin } from "../net/mod.ts";
import { sha256Hex } from "./signing.ts";

const CaseFileSchema = z.strictObject({
  /** Config handed to the module (the policy keys). */
  config: z.record(z.string(), z.unknown()).default({}),
  cases: z.array(z.strictObject({
    name: z.string().min(1),
    facts: z.record(z.string(), z.unknown()),
    expect: z.strictObject({
      decision: z.enum(["allow", "deny", "confirm"]),
      reason: z.string().optional(),
    }),
  })).min(1),
});

/** One case's outcome. */
export interface CaseResult {
  name: string;
  ok: boolean;
  expected: string;
  actual: string;
}

/** The neutral facts every case starts from. */
export function defaultFacts(): Facts {
  return baseFacts("snapshot", FRESH_SESSION);
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (over === null || typeof over !== "object" || Array.isArray(over)) return over;
  if (base === null || typeof base !== "object" || Array.isArray(base)) return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(out[k], v);
  return out;
}

/** Applies the runtime's normalization to hand-written facts. */
export function normalizeFacts(facts: Facts): Facts {
  const o = (v: string | null) => (v === null ? null : normalizeOrigin(v) ?? v.toLowerCase());
  const p = (v: string | null) => (v === null ? null : canonicalPath(v));
  const f = structuredClone(facts);
  if (f.target) f.target = { ...f.target, origin: o(f.target.origin), path: p(f.target.path) };
  f.frame.origin = o(f.frame.origin);
  if (f.form) {
    f.form = {
      ...f.form,
      action_origin: o(f.form.action_origin),
      action_path: p(f.form.action_path),
    };
  }
  if (f.element) {
    f.element = {
      ...f.element,
      link_origin: o(f.element.link_origin),
      link_path: p(f.element.link_path),
    };
  }
  return f;
}

/** One case of a case file, its facts merged over the defaults and normalized. */
export interface ParsedCase {
  name: string;
  /** Normalized facts, or why the case's facts are invalid. */
  facts: { ok: true; value: Facts } | { ok: false; error: string };
  expected: { decision: "allow" | "deny" | "confirm"; reason?: string };
}

/** Parses a case file: the module config as the loader hands it over, and the cases. */
export function parseCaseFile(
  casesYaml: string,
  source = "cases",
): { config: Record<string, unknown>; cases: ParsedCase[] } {
  let parsed;
  try {
    parsed = CaseFileSchema.parse(parseYaml(casesYaml));
  } catch (err) {
    throw new PolicyFileError(`${source}: ${(err as Error).message.split("\n")[0]}`);
  }
  const config = parsed.config.denied_paths
    ? {
      ...parsed.config,
      denied_paths: (parsed.config.denied_paths as { origin: string; path_prefix: string }[]).map(
        (d) => ({
          origin: d.origin === "*" ? "*" : normalizeOrigin(d.origin) ?? d.origin,
          path_prefix: canonicalPath(d.path_prefix),
        }),
      ),
    }
    : parsed.config;
  const cases = parsed.cases.map((c): ParsedCase => {
    const merged = FactsSchema.safeParse(deepMerge(defaultFacts(), c.facts));
    return {
      name: c.name,
      expected: c.expect,
      facts: merged.success ? { ok: true, value: normalizeFacts(merged.data) } : {
        ok: false,
        error: `invalid facts: ${merged.error.issues[0].path.join(".")}: ${
          merged.error.issues[0].message
        }`,
      },
    };
  });
  return { config, cases };
}

/** Runs a case file against a module. */
export async function runCases(
  wasm: Uint8Array,
  casesYaml: string,
  source = "cases",
): Promise<CaseResult[]> {
  const { config, cases } = parseCaseFile(casesYaml, source);
  await using engine = await PolicyEngine.create([{
    name: "module",
    kind: "rule",
    wasm,
    sha256: await sha256Hex(wasm),
    config: JSON.stringify(config),
  }]);
  const results: CaseResult[] = [];
  for (const c of cases) {
    const expected = `${c.expected.decision}${c.expected.reason ? ` ${c.expected.reason}` : ""}`;
    if (!c.facts.ok) {
      results.push({ name: c.name, ok: false, expected, actual: c.facts.error });
      continue;
    }
    const { verdicts } = await engine.evaluate(c.facts.value);
    const v = verdicts[0];
    const actual = `${v.decision} ${v.reason}`;
    const ok = v.decision === c.expected.decision &&
      (c.expected.reason === undefined || v.reason === c.expected.reason);
    results.push({ name: c.name, ok, expected, actual });
  }
  return results;
}

/** A readable report; failures show expected and actual side by side. */
export function formatResults(results: CaseResult[]): string {
  const lines = results.map((r) =>
    r.ok
      ? `ok    ${r.name}`
      : `FAIL  ${r.name}\n      expected: ${r.expected}\n      actual:   ${r.actual}`
  );
  const failed = results.filter((r) => !r.ok).length;
  lines.push(`${results.length - failed} passed, ${failed} failed`);
  return lines.join("\n");
}
