/**
 * What a browser's own network namespace costs (runtime/isolation/), with and without it,
 * side by side in one run: session start (from the MCP client's connect to the answer of its
 * first `browser_navigate`, a local page) and a corpus page load (`browser_navigate` to a real
 * page of `../shared/corpus/pages/`, its third-party requests refused, in a session already
 * started). The two runtimes run at once and their calls alternate, so both see the same
 * machine load.
 *
 * Session start is measured twice: cold (`--warm-browsers 0`: each session launches its own
 * browser) and warm (the default pool of one: a session takes a browser started ahead of it;
 * the pool is given time to refill between sessions, as between a team's agents arriving).
 *
 * Run: deno run -A bench/isolation_bench.ts [ROUNDS]   (default 5; root needs the
 * omotai-browser user for the sandboxed form)
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { agentTransport, startTestRuntime, TestClient } from "../tests/helpers/harness.ts";
import { serveFixtureSite } from "../tests/fixtures/site.ts";
import type { Runtime } from "../runtime/cli/start.ts";
import { median } from "./compare.ts";
import { serveCorpus } from "./corpus.ts";

/** Real pages with many refused third-party requests (news, reference, blogs). */
const CORPUS_PAGES = ["wikipedia", "cnet", "buzzfeed-1", "nytimes-1", "guardian-1"];

/** Milliseconds from connect to the first navigation's answer. */
async function sessionStart(runtime: Runtime, url: string): Promise<number> {
  const client = new Client({ name: "omotai-bench", version: "0" });
  const t0 = performance.now();
  await client.connect(await agentTransport(runtime, "http"));
  await using c = new TestClient(client);
  const r = await c.call("browser_navigate", { url });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`navigation failed: ${r.text.slice(0, 200)}`);
  return ms;
}

/** A session on `runtime`, started with a first navigation. */
async function openSession(runtime: Runtime, url: string): Promise<TestClient> {
  const client = new Client({ name: "omotai-bench", version: "0" });
  await client.connect(await agentTransport(runtime, "http"));
  const c = new TestClient(client);
  await navigate(c, url);
  return c;
}

/** Milliseconds until `browser_navigate` to `url` answers. */
async function navigate(c: TestClient, url: string): Promise<number> {
  const t0 = performance.now();
  const r = await c.call("browser_navigate", { url });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`navigation to ${url} failed: ${r.text.slice(0, 200)}`);
  return ms;
}

function p95(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))];
}

if (import.meta.main) {
  const rounds = Number(Deno.args[0] ?? 5);
  const site = serveFixtureSite();
  const corpus = serveCorpus();
  const corpusBase = `http://127.0.0.1:${corpus.addr.port}`;
  const dirs: string[] = [];
  const start = async (mode: "off" | "auto", warmBrowsers = 0) => {
    const dir = await Deno.makeTempDir({ prefix: "omotai-bench-" });
    dirs.push(dir);
    return await startTestRuntime(dir, `allowed_origins: [${site.origin}, ${corpusBase}]\n`, {
      isolation: { mode },
      warmBrowsers,
    });
  };
  const plain = await start("off");
  const isolated = await start("auto");
  const times = { none: [] as number[], netns: [] as number[] };
  const warmTimes = { none: [] as number[], netns: [] as number[] };
  const loads = { none: [] as number[], netns: [] as number[] };
  try {
    if (isolated.isolation.kind !== "netns") {
      console.log(`no namespace here: ${isolated.isolation.reason}`);
    }
    for (let i = 0; i < rounds; i++) {
      // Alternate which goes first, so neither always starts on a quieter machine.
      const order = i % 2 === 0 ? [plain, isolated] : [isolated, plain];
      for (const rt of order) {
        const ms = await sessionStart(rt, `${site.origin}/`);
        (rt === plain ? times.none : times.netns).push(Math.round(ms));
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    {
      await using warmPlain = await start("off", 1);
      await using warmIsolated = await start("auto", 1);
      for (let i = 0; i < rounds; i++) {
        const order = i % 2 === 0 ? [warmPlain, warmIsolated] : [warmIsolated, warmPlain];
        for (const rt of order) {
          // The pool refills behind each session: agents do not arrive back to back.
          await new Promise((r) => setTimeout(r, 4_000));
          const ms = await sessionStart(rt, `${site.origin}/`);
          (rt === warmPlain ? warmTimes.none : warmTimes.netns).push(Math.round(ms));
        }
      }
    }
    // Corpus page loads in one open session per runtime, alternating page by page.
    await using a = await openSession(plain, `${site.origin}/`);
    await using b = await openSession(isolated, `${site.origin}/`);
    for (let i = 0; i < rounds; i++) {
      for (const page of CORPUS_PAGES) {
        const order = i % 2 === 0 ? [a, b] : [b, a];
        for (const c of order) {
          const ms = await navigate(c, `${corpusBase}/${page}/`);
          (c === a ? loads.none : loads.netns).push(Math.round(ms));
        }
      }
    }
  } finally {
    await corpus.shutdown();
    await plain[Symbol.asyncDispose]();
    await isolated[Symbol.asyncDispose]();
    await site[Symbol.asyncDispose]();
    for (const d of dirs) await Deno.remove(d, { recursive: true }).catch(() => {});
  }
  const m = { none: median(times.none), netns: median(times.netns) };
  console.log(`session start, ms (connect to first browser_navigate answered), ${rounds} rounds`);
  console.log(`  none : median ${m.none}  runs ${times.none.join(", ")}`);
  console.log(
    `  netns: median ${m.netns}  runs ${times.netns.join(", ")}  (${isolated.isolation.kind})`,
  );
  console.log(`  cost : ${Math.round(((m.netns - m.none) / m.none) * 100)} %`);
  const w = { none: median(warmTimes.none), netns: median(warmTimes.netns) };
  console.log(`session start with a warm browser (the default pool of one), ${rounds} rounds`);
  console.log(`  none : median ${w.none}  runs ${warmTimes.none.join(", ")}`);
  console.log(`  netns: median ${w.netns}  runs ${warmTimes.netns.join(", ")}`);
  console.log(`  cost : ${Math.round(((w.netns - w.none) / w.none) * 100)} %`);
  const l = { none: median(loads.none), netns: median(loads.netns) };
  console.log(
    `corpus page load, ms (browser_navigate answered; ${
      CORPUS_PAGES.join(", ")
    }), ${rounds} rounds`,
  );
  console.log(`  none : median ${l.none}  p95 ${p95(loads.none)}`);
  console.log(`  netns: median ${l.netns}  p95 ${p95(loads.netns)}`);
  console.log(`  cost : ${Math.round(((l.netns - l.none) / l.none) * 100)} %`);
}
