/**
 * A realistic mix of facts for policy benchmarks and differential tests: mostly reads and
 * same-origin requests, some clicks and forms, a few foreign or denied targets.
 *
 * @module
 */
import { parse } from "yaml";
import { defaultFacts, normalizeFacts } from "../runtime/policy/case_runner.ts";
import { type Facts, FactsSchema } from "../runtime/policy/facts.ts";
import { canonicalPath } from "../runtime/net/paths.ts";
import type { BaselineConfig } from "./baseline_reference.ts";

/** The baseline case table's config and facts, normalized like the runtime does. */
export async function baselineCaseFacts(): Promise<{ config: BaselineConfig; facts: Facts[] }> {
  const text = await Deno.readTextFile(
    new URL("../policies-wasm/modules/baseline.cases.yaml", import.meta.url),
  );
  const doc = parse(text) as {
    config: BaselineConfig;
    cases: { facts: Record<string, unknown> }[];
  };
  const facts = doc.cases.map((c) => {
    const merged = { ...defaultFacts(), ...c.facts } as Record<string, unknown>;
    return normalizeFacts(FactsSchema.parse(merged));
  });
  // Prefixes as the policy loader hands them to modules: canonical.
  const config = {
    ...doc.config,
    denied_paths: doc.config.denied_paths.map((d) => ({
      ...d,
      path_prefix: canonicalPath(d.path_prefix),
    })),
  };
  return { config, facts };
}

/** Weighted mix: requests dominate real traffic. */
export function weightedMix(facts: Facts[], n: number): Facts[] {
  const requests = facts.filter((f) => f.kind === "request");
  const out: Facts[] = [];
  for (let i = 0; i < n; i++) {
    out.push(i % 3 === 0 ? facts[i % facts.length] : requests[i % requests.length]);
  }
  return out;
}
