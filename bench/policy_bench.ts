/**
 * Verdict latency of the combined shipped modules (in-process, fuel-metered) over a realistic
 * facts mix, beside a plain TypeScript function computing the baseline verdicts, in one run.
 *
 * @module
 */
import { PolicyEngine } from "../runtime/policy/engine.ts";
import { sha256Hex } from "../runtime/policy/signing.ts";
import { baselineVerdict } from "./baseline_reference.ts";
import { median } from "./compare.ts";
import { baselineCaseFacts, weightedMix } from "./facts_mix.ts";

const N = Number(Deno.env.get("OMOTAI_BENCH_VERDICTS") ?? 5_000);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function main() {
  const { config, facts } = await baselineCaseFacts();
  const mix = weightedMix(facts, N);
  const load = async (name: string, extra: Record<string, unknown> = {}) => {
    const wasm = await Deno.readFile(
      new URL(`../policies-wasm/dist/${name}.wasm`, import.meta.url),
    );
    return {
      name,
      kind: "rule" as const,
      wasm,
      sha256: await sha256Hex(wasm),
      config: JSON.stringify({ ...config, ...extra }),
    };
  };
  await using engine = await PolicyEngine.create([
    await load("baseline"),
    await load("no-third-party-forms"),
    await load("path-allowlist", { allowed_paths: ["/"] }),
  ]);
  for (let i = 0; i < 2_000; i++) await engine.evaluate(mix[i % mix.length]); // warm up
  const wasmTimes: number[] = [];
  for (const f of mix) {
    const t0 = performance.now();
    await engine.evaluate(f);
    wasmTimes.push((performance.now() - t0) * 1000);
  }
  const tsTimes: number[] = [];
  for (const f of mix) {
    const t0 = performance.now();
    baselineVerdict(f, config);
    tsTimes.push((performance.now() - t0) * 1000);
  }
  console.log(
    [
      `## Policy verdict latency (${N} facts, ${facts.length} distinct, requests weighted 2:1)`,
      "",
      "| evaluator | p50 µs | p99 µs |",
      "|---|---:|---:|",
      `| 3 shipped WASM modules, in-process engine (baseline + no-third-party-forms + path-allowlist) | ${
        median(wasmTimes).toFixed(1)
      } | ${pct(wasmTimes, 99).toFixed(1)} |`,
      `| plain TypeScript baseline function | ${median(tsTimes).toFixed(2)} | ${
        pct(tsTimes, 99).toFixed(2)
      } |`,
      "",
      "Target: p99 ≤ 200 µs in-process for the combined modules.",
    ].join("\n"),
  );
}

if (import.meta.main) await main();
