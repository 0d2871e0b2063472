/**
 * Egress guard benchmark: the time the guard (request interception, policy verdict, audit
 * row, egress proxy hop) adds per request, on a local page with 200 subresources, beside
 * the same page in the same Chromium build with the guard off, in one run; and the load
 * time of a real corpus page both ways. The unguarded browser resolves no names at all
 * (`--host-resolver-rules`), so nothing reaches the internet from either side.
 *
 * Run: deno task bench   (or deno run -A bench/egress_bench.ts)
 *
 * @module
 */
import { join } from "node:path";
import { findBrowser, ProfileStore } from "../cdp/mod.ts";
import { AuditLog } from "../runtime/audit/audit_log.ts";
import { BrowserSession } from "../runtime/browser/browser_session.ts";
import { DomainRules } from "../runtime/egress/domains.ts";
import { EgressProxy } from "../runtime/egress/egress_proxy.ts";
import { Boundary } from "../runtime/gate/boundary.ts";
import { PolicyEngine } from "../runtime/policy/engine.ts";
import { loadModules } from "../runtime/policy/loader.ts";
import { parsePolicy } from "../runtime/policy/policy_file.ts";
import { openDatabase } from "../runtime/store/database.ts";
import { median } from "./compare.ts";

const SUBRESOURCES = 200;
const RUNS = 9;
const corpus = Deno.env.get("OMOTAI_CORPUS") ??
  new URL("../../shared/corpus/pages/", import.meta.url).pathname;

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

function serve() {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/many") {
      const run = url.searchParams.get("run");
      const imgs = Array.from(
        { length: SUBRESOURCES },
        (_, i) => `<img src="/r/${i}.png?run=${run}" width="1" height="1">`,
      ).join("");
      return new Response(`<!doctype html><title>many</title><body>${imgs}</body>`, {
        headers: { "content-type": "text/html", "cache-control": "no-store" },
      });
    }
    if (url.pathname.startsWith("/r/")) {
      return new Response(PNG, {
        headers: { "content-type": "image/png", "cache-control": "no-store" },
      });
    }
    const m = url.pathname.match(/^\/corpus\/([\w.-]+)\/$/);
    if (m) {
      const body = await Deno.readFile(join(corpus, m[1], "index.html")).catch(() => undefined);
      if (body) {
        return new Response(body, {
          headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
        });
      }
    }
    return new Response("not found", { status: 404 });
  });
}

async function loadTime(session: BrowserSession, url: string): Promise<number> {
  const page = await session.page();
  const loaded = page.waitFor("Page.loadEventFired", undefined, { timeoutMs: 60_000 });
  const t0 = performance.now();
  await page.send("Page.navigate", { url });
  await loaded;
  const ms = performance.now() - t0;
  const blank = page.waitFor("Page.loadEventFired", undefined, { timeoutMs: 10_000 });
  await page.send("Page.navigate", { url: "about:blank" });
  await blank;
  return ms;
}

if (import.meta.main) {
  const server = serve();
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-egress-bench-" });
  const db = openDatabase(join(dataDir, "omotai.db"));
  const policy = parsePolicy(`allowed_origins: [${origin}]\nread_only: true\n`);
  await using engine = await PolicyEngine.create(await loadModules(policy, undefined));
  const boundary = new Boundary({
    engine,
    domains: new DomainRules(db),
    audit: new AuditLog(db),
    allowedOrigins: policy.allowed_origins,
  });
  await using proxy = EgressProxy.start();
  await using profiles = await ProfileStore.open(dataDir);
  const executable = findBrowser(Deno.env.get("OMOTAI_BROWSER"));
  await using on = new BrowserSession({ profiles, executable, egress: { boundary, proxy } });
  await using off = new BrowserSession({
    profiles,
    executable,
    extraArgs: ["--host-resolver-rules=MAP * ~NOTFOUND"],
  });
  const times = { on: [] as number[], off: [] as number[] };
  let run = 0;
  // Warm both browsers, then alternate so drift hits both sides alike.
  await loadTime(on, `${origin}/many?run=warm`);
  await loadTime(off, `${origin}/many?run=warm`);
  for (let i = 0; i < RUNS; i++) {
    times.on.push(await loadTime(on, `${origin}/many?run=${run++}`));
    times.off.push(await loadTime(off, `${origin}/many?run=${run++}`));
  }
  const requests = SUBRESOURCES + 1;
  const added = (median(times.on) - median(times.off)) / requests;

  const corpusPage = "wikipedia";
  const corpusTimes = { on: [] as number[], off: [] as number[] };
  for (let i = 0; i < 3; i++) {
    corpusTimes.on.push(await loadTime(on, `${origin}/corpus/${corpusPage}/`));
    corpusTimes.off.push(await loadTime(off, `${origin}/corpus/${corpusPage}/`));
  }
  const rows = db.prepare("SELECT count(*) AS n FROM audit WHERE source = 'request'").get() as {
    n: number;
  };
  console.log(
    [
      `## Egress guard benchmark (median of ${RUNS} loads, same Chromium, one run)`,
      "",
      "| page | guard on (ms) | guard off (ms) | added per request |",
      "|---|---|---|---|",
      `| local, ${SUBRESOURCES} subresources (${requests} requests) | ${
        median(times.on).toFixed(0)
      } | ${median(times.off).toFixed(0)} | ${(added * 1000).toFixed(0)} µs |`,
      `| corpus ${corpusPage} (median of 3) | ${median(corpusTimes.on).toFixed(0)} | ${
        median(corpusTimes.off).toFixed(0)
      } | |`,
      "",
      `Guard on: every request paused, judged by the signed baseline module, audited (${rows.n} request rows) and sent through the egress proxy. Guard off: a plain Chromium with no interception, proxy or audit.`,
    ].join("\n"),
  );
  // The sessions write their last audit rows when they stop: before the database closes.
  await on[Symbol.asyncDispose]();
  await off[Symbol.asyncDispose]();
  db.close();
  await server.shutdown();
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
}
