/**
 * Observation benchmark: for every corpus page, the size of what the model reads and the
 * links/buttons/inputs it can reach, Omotai beside Playwright MCP, plus navigate+snapshot
 * round-trip times. Both servers run over stdio in this process tree.
 *
 * Run: deno task bench   (OMOTAI_CORPUS overrides the corpus folder)
 *
 * @module
 */
import { coverage, geomean, median, omotaiControls, playwrightControls } from "./compare.ts";
import { corpusNames, serveCorpus } from "./corpus.ts";
import {
  type BenchClient,
  PLAYWRIGHT_MCP_VERSION,
  startOmotai,
  startPlaywrightMcp,
} from "./peer.ts";

const ROUNDS = Number(Deno.env.get("OMOTAI_BENCH_ROUNDS") ?? 7);
/**
 * A corpus page whose Playwright MCP snapshot is at least this long is a real site's page
 * (news, reference, shop); the shorter ones are Readability's small test documents, where
 * both servers send the text and little else.
 */
const REAL_PAGE_MIN_CHARS = 20_000;

const ROUND_TRIP_PAGE = `<!doctype html><html><head><title>Round trip</title></head><body>
<h1>Round trip</h1><nav>${
  Array.from({ length: 30 }, (_, i) => `<a href="/x/${i}">Link ${i}</a>`).join(" ")
}</nav>
<form><label>Name <input name="n"></label><select><option>A</option><option>B</option></select>
<button>Send</button></form>${
  Array.from({ length: 20 }, (_, i) => `<p>Paragraph ${i} with some ordinary text in it.</p>`)
    .join("")
}</body></html>`;

async function omotaiAllPages(
  om: BenchClient,
): Promise<{ first: string; all: string; pages: number }> {
  const first = await om.call("browser_snapshot", {});
  const pages = Number(first.match(/ page 1\/(\d+)/)?.[1] ?? 1);
  let all = first;
  for (let p = 2; p <= pages; p++) all += "\n" + await om.call("browser_snapshot", { page: p });
  return { first, all, pages };
}

/** Every ref's line, once. */
function uniqueRefLines(text: string): string {
  // The last line of each ref: the full pages come after the overview, whose names are cut.
  const last = new Map<string, string>();
  for (const line of text.split("\n")) {
    const ref = line.match(/^(?:- )?\[(e\d+)\]/)?.[1];
    if (ref) last.set(ref, line);
  }
  return [...last.values()].join("\n");
}

/**
 * Time until the model holds the new page's snapshot. Omotai's navigate returns it; Playwright
 * MCP's navigate stores it in a file, so its snapshot call is part of the round trip.
 */
async function timeNavigate(c: BenchClient, url: string): Promise<number> {
  const t0 = performance.now();
  const nav = await c.call("browser_navigate", { url });
  if (c.name !== "omotai" && !nav.includes("```yaml")) await c.call("browser_snapshot", {});
  return performance.now() - t0;
}

async function main() {
  const names = await corpusNames();
  const server = serveCorpus((path) =>
    path === "/__roundtrip"
      ? new Response(ROUND_TRIP_PAGE, { headers: { "content-type": "text/html" } })
      : undefined
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-bench-" });
  await using pw = await startPlaywrightMcp();
  await using om = await startOmotai(dataDir, [base]);

  const rows: string[] = [];
  const ratios: number[] = [];
  const realRatios: number[] = [];
  let totalRef = 0;
  let totalCovered = 0;
  let fullCoverage = 0;
  const misses: string[] = [];
  for (const name of names) {
    const url = `${base}/${name}/`;
    await pw.call("browser_navigate", { url });
    const pwSnap = await pw.call("browser_snapshot", {});
    await om.call("browser_navigate", { url });
    const ours = await omotaiAllPages(om);
    const ref = playwrightControls(pwSnap);
    // Overview and full pages list the same controls; count each ref once.
    const cand = omotaiControls(uniqueRefLines(ours.all));
    const cov = coverage(ref, cand);
    totalRef += cov.total;
    totalCovered += cov.covered;
    if (cov.covered === cov.total) fullCoverage++;
    for (const m of cov.missing.slice(0, 3)) misses.push(`${name}: ${m.cls} "${m.name}"`);
    const ratio = ours.first.length / pwSnap.length;
    ratios.push(ratio);
    if (pwSnap.length >= REAL_PAGE_MIN_CHARS) realRatios.push(ratio);
    rows.push(
      `| ${name} | ${ours.first.length} | ${ours.pages} | ${pwSnap.length} | ${
        (ratio * 100).toFixed(1)
      }% | ${cand.length} | ${ref.length} | ${cov.covered}/${cov.total} |`,
    );
  }

  const rt = { omotai: [] as number[], pw: [] as number[] };
  const rtCorpus = { omotai: [] as number[], pw: [] as number[] };
  const corpusPage = names.includes("wikipedia") ? "wikipedia" : names[0];
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate who goes first so neither profits from a warm OS cache.
    const order = i % 2
      ? [[om, "omotai"], [pw, "pw"]] as const
      : [[pw, "pw"], [om, "omotai"]] as const;
    for (const [client, key] of order) {
      rt[key].push(await timeNavigate(client, `${base}/__roundtrip?i=${i}`));
      rtCorpus[key].push(await timeNavigate(client, `${base}/${corpusPage}/`));
    }
  }

  const lines = [
    `## Observation benchmark (Omotai vs Playwright MCP ${PLAYWRIGHT_MCP_VERSION}, ${names.length} corpus pages)`,
    "",
    "Sizes are characters of the browser_snapshot tool result; Omotai's is its first page (default budget 6,000 tokens); 'pages' is how many pages together expose the whole outline; controls are links, buttons and inputs.",
    "",
    "| page | omotai chars (page 1) | pages | playwright chars | ratio | omotai controls | playwright controls | playwright controls reachable in omotai |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    `Median size ratio: ${
      (median(ratios) * 100).toFixed(1)
    }%. First page, geomean of the ${realRatios.length} real pages (Playwright MCP over ${
      REAL_PAGE_MIN_CHARS.toLocaleString("en-US")
    } characters): ${geomean(realRatios).toFixed(3)} (target ≤ 0.125); of all ${ratios.length}: ${
      geomean(ratios).toFixed(3)
    }.`,
    `Controls Playwright MCP exposes that Omotai's pages also expose: ${totalCovered}/${totalRef} (${
      (totalCovered / Math.max(totalRef, 1) * 100).toFixed(1)
    }%); pages with every control reachable: ${fullCoverage}/${names.length}.`,
    misses.length ? `First misses: ${misses.slice(0, 12).join("; ")}` : "No misses.",
    "",
    `Navigate+snapshot round trip, median of ${ROUNDS} (ms):`,
    "",
    "| page | omotai | playwright mcp |",
    "|---|---:|---:|",
    `| local 30-link form page | ${median(rt.omotai).toFixed(0)} | ${median(rt.pw).toFixed(0)} |`,
    `| corpus ${corpusPage} | ${median(rtCorpus.omotai).toFixed(0)} | ${
      median(rtCorpus.pw).toFixed(0)
    } |`,
  ];
  console.log(lines.join("\n"));
  await server.shutdown();
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
}

if (import.meta.main) await main();
