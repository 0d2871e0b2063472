/**
 * Egress guard benchmark: the time the guard (policy verdict, audit row, egress proxy hop,
 * and `Fetch` interception where `request_guard` asks for it) adds per request, on a local
 * page with 200 subresources, for each `request_guard` value, beside the same page in the
 * same Chromium build with the guard off, in one run; and the load time of a real corpus page
 * each way. A further browser intercepts with `Fetch` and lets every request go at once,
 * without a verdict: Chromium's own price for interception, the floor the target is
 * set against. The unguarded browsers resolve no name but loopback (`--host-resolver-rules`),
 * so nothing reaches the internet from either side; the server counts what each load fetched,
 * and a load that did not fetch all its subresources stops the benchmark (an error page would
 * otherwise look like a fast load).
 *
 * Run: deno task bench   (or deno run -A bench/egress_bench.ts)
 *
 * @module
 */
import { join } from "node:path";
import { type CdpSession, findBrowser, ProfileStore } from "../cdp/mod.ts";
import { SqliteAuditLog } from "../runtime/store/sqlite_audit_log.ts";
import { BrowserSession } from "../runtime/browser/browser_session.ts";
import type { BrowserHooksFactory } from "../runtime/browser/hooks.ts";
import { SqliteDomainStore } from "../runtime/store/sqlite_domain_store.ts";
import { EgressProxy } from "../runtime/egress/egress_proxy.ts";
import { TlsAuthority } from "../runtime/egress/tls_authority.ts";
import { egressHooks } from "../runtime/egress/egress_hooks.ts";
import type { GuardPause } from "../runtime/egress/request_guard.ts";
import { Boundary } from "../runtime/gate/boundary.ts";
import { PolicyEngine } from "../runtime/policy/engine.ts";
import { loadModules } from "../runtime/policy/loader.ts";
import { parsePolicy, type PolicyFile } from "../runtime/policy/policy_file.ts";
import type { DatabaseSync } from "node:sqlite";
import { openDatabase } from "../runtime/store/database.ts";
import { median } from "./compare.ts";
import { processRedactor } from "../runtime/redact/mod.ts";

/** Images on the local page (plus the document: 201 requests per load). */
export const SUBRESOURCES = 200;
const RUNS = 9;
/** A corpus page loads in a fifth of the time and varies as much: more loads for its median. */
const CORPUS_RUNS = 15;
const corpus = Deno.env.get("OMOTAI_CORPUS") ??
  new URL("../../shared/corpus/pages", import.meta.url).pathname;

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** Requests served per `run` parameter. */
export const served = new Map<string, number>();

/** The local test server: `/many?run=ID` and its images, and corpus pages. */
export function serve(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const runParam = url.searchParams.get("run");
    if (runParam !== null) served.set(runParam, (served.get(runParam) ?? 0) + 1);
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

/** The page of a session, or of a bare browser with interception only. */
/** Something with a page to load into. */
export interface Loader {
  page(): Promise<CdpSession>;
}

/** Navigates to `url`, waits for the load event, returns the time, then goes blank. */
export async function loadTime(session: Loader, url: string): Promise<number> {
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

/**
 * Hooks that pause every request of every page and frame with `Fetch` and continue it at
 * once: what interception itself costs, with no verdict, audit or proxy. Put on the same
 * unguarded session as the "guard off" side (same watchers: the network log's `Network`
 * domain, the page log, dialogs), so the two differ by interception alone.
 */
export function interceptOnly(): BrowserHooksFactory {
  return () => ({
    prepareTarget: async (t) => {
      if (t.info.type !== "page" && t.info.type !== "iframe") return;
      t.session.on("Fetch.requestPaused", (e) => {
        t.session.send("Fetch.continueRequest", { requestId: e.requestId }).catch(() => {});
      });
      await t.session.send("Fetch.enable", {
        patterns: [{ urlPattern: "*", requestStage: "Request" }],
      });
    },
  });
}

/** Flags of an unguarded browser: it resolves no name but loopback. */
export const LOOPBACK_ONLY = ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"];

/** What both egress benchmarks start from (see {@link benchWorld}). */
export interface BenchWorld {
  server: Deno.HttpServer<Deno.NetAddr>;
  origin: string;
  dataDir: string;
  db: DatabaseSync;
  policy: PolicyFile;
  engine: PolicyEngine;
  close(): Promise<void>;
}

/**
 * What both egress benchmarks start from: the local server, a data dir with its database,
 * and the baseline policy allowing only the server's origin. `close()` removes it all.
 */
export async function benchWorld(prefix: string): Promise<BenchWorld> {
  const server = serve();
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const dataDir = await Deno.makeTempDir({ prefix });
  const db = openDatabase(join(dataDir, "omotai.db"));
  const policy = parsePolicy(`allowed_origins: [${origin}]\nread_only: true\n`);
  const engine = await PolicyEngine.create(await loadModules(policy, undefined));
  return {
    server,
    origin,
    dataDir,
    db,
    policy,
    engine,
    async close(): Promise<void> {
      db.close();
      await server.shutdown();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** The guard variants measured, by what `request_guard` pauses with `Fetch`. */
const VARIANTS: { pause: GuardPause; label: string }[] = [
  { pause: "all", label: "Fetch pauses and judges every request, the proxy forwards it" },
  { pause: "documents", label: "Fetch pauses and judges documents, the proxy the rest" },
  { pause: "proxy", label: "Fetch pauses nothing, the proxy judges every request (default)" },
];

if (import.meta.main) {
  const world = await benchWorld("omotai-egress-bench-");
  const { origin, dataDir, db, policy, engine } = world;
  const audit = new SqliteAuditLog(db, { redactor: processRedactor() });
  const boundary = new Boundary({
    engine,
    domains: new SqliteDomainStore(db),
    audit,
    allowedOrigins: policy.allowed_origins,
  });
  // The runtime's proxy: TLS terminated in every tunnel, each request judged whole.
  await using proxy = EgressProxy.start({ authority: await TlsAuthority.create() });
  await using profiles = await ProfileStore.open(dataDir);
  const executable = findBrowser(Deno.env.get("OMOTAI_BROWSER"));
  const guarded = VARIANTS.map((v) => ({
    ...v,
    session: new BrowserSession({
      profiles,
      executable,
      audit,
      hooks: egressHooks({ boundary, proxy, pause: v.pause }),
    }),
  }));
  await using off = new BrowserSession({ profiles, executable, audit, extraArgs: LOOPBACK_ONLY });
  await using floor = new BrowserSession({
    profiles,
    executable,
    audit,
    extraArgs: LOOPBACK_ONLY,
    hooks: interceptOnly(),
  });
  const sides: [string, Loader][] = [
    ...guarded.map((g): [string, Loader] => [g.pause, g.session]),
    ["off", off],
    ["floor", floor],
  ];
  const times = new Map<string, number[]>(sides.map(([side]) => [side, []]));
  let run = 0;
  const measure = async (side: string, loader: Loader) => {
    const id = `${side}-${run++}`;
    times.get(side)!.push(await loadTime(loader, `${origin}/many?run=${id}`));
    const got = served.get(id) ?? 0;
    if (got !== SUBRESOURCES + 1) {
      throw new Error(`${side}: a load fetched ${got} of ${SUBRESOURCES + 1} requests`);
    }
  };
  // Warm every browser, then alternate so drift hits all sides alike.
  for (const [side, loader] of sides) {
    await loadTime(loader, `${origin}/many?run=warm-${side}`);
  }
  for (let i = 0; i < RUNS; i++) {
    for (const [side, loader] of sides) await measure(side, loader);
  }
  const requests = SUBRESOURCES + 1;
  const med = (side: string) => median(times.get(side)!);
  const added = (side: string) => (med(side) - med("off")) / requests;

  const corpusPage = "wikipedia";
  const corpusSides: [string, Loader][] = [
    ...guarded.map((g): [string, Loader] => [g.pause, g.session]),
    ["off", off],
  ];
  const corpusTimes = new Map<string, number[]>(corpusSides.map(([side]) => [side, []]));
  for (let i = 0; i < CORPUS_RUNS; i++) {
    for (const [side, loader] of corpusSides) {
      corpusTimes.get(side)!.push(await loadTime(loader, `${origin}/corpus/${corpusPage}/`));
    }
  }
  const corpusMed = (side: string) => median(corpusTimes.get(side)!);
  const pct = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(1)} %`;
  const rows = db.prepare("SELECT count(*) AS n FROM audit WHERE source IN ('request', 'proxy')")
    .get() as { n: number };
  const µs = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  console.log(
    [
      `## Egress guard benchmark (median of ${RUNS} loads, same Chromium, one run)`,
      "",
      "| page | guard on (ms) | guard off (ms) | added per request | above the floor |",
      "|---|---|---|---|---|",
      ...guarded.map((g) =>
        `| local, ${requests} requests: ${g.label} | ${med(g.pause).toFixed(0)} | ${
          med("off").toFixed(0)
        } | ${µs(added(g.pause))} | ${µs(added(g.pause) - added("floor"))} |`
      ),
      `| same page, unguarded session plus Fetch interception, no verdict (Chromium's floor) | ${
        med("floor").toFixed(0)
      } | ${med("off").toFixed(0)} | ${µs(added("floor"))} | |`,
      ...guarded.map((g) =>
        `| corpus ${corpusPage} (median of ${CORPUS_RUNS}): ${g.label} | ${
          corpusMed(g.pause).toFixed(0)
        } | ${corpusMed("off").toFixed(0)} | ${pct(corpusMed(g.pause), corpusMed("off"))} | |`
      ),
      "",
      `Guard on: requests judged by the signed baseline module and audited (${rows.n} request rows), the egress proxy on every connection. Guard off: a plain Chromium with no interception, proxy or audit. Every measured load fetched all ${requests} requests (counted by the server).`,
    ].join("\n"),
  );
  // The sessions write their last audit rows when they stop: before the database closes.
  for (const g of guarded) await g.session[Symbol.asyncDispose]();
  await off[Symbol.asyncDispose]();
  await floor[Symbol.asyncDispose]();
  await world.close();
}
