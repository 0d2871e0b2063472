/**
 * How Omotai and the peer (Playwright MCP, bench/peer.ts) hold up under N concurrent MCP
 * sessions over Streamable HTTP, side by side in one run: N clients on ONE server each open a
 * session and navigate three real pages of `../shared/corpus/pages/` in sequence (news and
 * reference pages, their third-party requests refused or unresolvable; the pages rotate so the
 * clients do not all load the same one at once). The two systems run one after the other at
 * each size, never at once, so they do not share the CPU.
 *
 * Per system and size it reports: navigations ok / total (an `isError` result, a Playwright
 * `### Error` text or a thrown call is not ok), p50 / p95 of `browser_navigate` latency,
 * browser-only PSS per session (the summed `Pss` of every Chromium process descending from the
 * system's own process, sampled while all N sessions are open after their last navigation,
 * divided by N), the server process's own PSS (for Omotai that is this bench's process, since
 * the runtime runs in it, clients and corpus server included), the Chromium processes still
 * there 2 s after every client ended its session (HTTP DELETE, then close; target 0), and the
 * p50 over the N sessions of connect-to-first-navigation-answered.
 *
 * Then, Omotai only (Playwright MCP has neither verdicts nor approvals), its responsiveness at
 * `--responsiveness N` busy sessions (default: the largest size; 0 skips it): on a runtime of
 * its own (read-only, `confirm_writes`), a probe session's verdict latency (a `browser_navigate`
 * to an origin the policy does not allow, denied by the gate without browser work) and an
 * approval's turnaround (a POST form's click held: click to the request listed by
 * `GET /api/approvals`, then approve to the click's answer), each at idle and again while N
 * other sessions navigate the corpus in a loop; p50 / p95 of each, and the load averages.
 *
 * Run: deno run -A bench/scale_bench.ts [--sizes 1,5,10,20] [--responsiveness N] [--json PATH]
 * (Omotai uses the default isolation, `auto`: as root it needs the omotai-browser user, bwrap
 * and socat for a network namespace per browser.)
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { agentTransport, refOf, startTestRuntime } from "../tests/helpers/harness.ts";
import { descendants, type Proc, processes, pssKiB } from "../tests/helpers/processes.ts";
import type { Runtime } from "../runtime/cli/start.ts";
import { findBrowser, runningAsRoot } from "../cdp/mod.ts";
import { serveCorpus } from "./corpus.ts";
import { ensurePeerInstalled, PLAYWRIGHT_MCP_VERSION } from "./peer.ts";

/** Real pages with many refused third-party requests (news, reference). */
export const SCALE_PAGES = ["wikipedia", "cnet", "nytimes-1", "guardian-1", "buzzfeed-1"];
/** Navigations per session. */
export const NAVS_PER_SESSION = 3;
/** How long after the last session ends the leftover processes are counted. */
const LEFT_AFTER_MS = 2_000;
/** How long leftovers are then watched for, to say when they went. */
const GONE_POLL_MS = 30_000;
/** Generous per-call timeout: 20 sessions on 2 cores are slow, and slow is what we measure. */
const CALL_TIMEOUT_MS = 180_000;

// ---------------------------------------------------------------------------------------------
// Pure helpers (tested by scale_bench_test.ts)
// ---------------------------------------------------------------------------------------------

/** Command-line options. */
export interface ScaleArgs {
  sizes: number[];
  json?: string;
  /** Busy sessions of the responsiveness measurement (0: skip it); default the largest size. */
  responsiveness: number;
  /** One system alone (`--only omotai`), to try a change quickly; the tables need both. */
  only?: "omotai" | "playwright-mcp";
}

/**
 * Parses `--sizes 1,5,10,20` (or `--sizes=…`), `--json PATH`, `--responsiveness N` (0
 * skips it; without the flag, N is the largest of the sizes) and `--only omotai|playwright-mcp`.
 */
export function parseArgs(argv: string[]): ScaleArgs {
  const out: ScaleArgs = { sizes: [1, 5, 10, 20], responsiveness: -1 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--sizes") {
      const sizes = value().split(",").map((s) => Number(s.trim()));
      if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1)) {
        throw new Error(`--sizes takes positive integers separated by commas`);
      }
      out.sizes = sizes;
    } else if (flag === "--json") out.json = value();
    else if (flag === "--responsiveness") {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 0) {
        throw new Error(`--responsiveness takes a number of sessions (0 skips it)`);
      }
      out.responsiveness = n;
    } else if (flag === "--only") {
      const v = value();
      if (v !== "omotai" && v !== "playwright-mcp") {
        throw new Error(`--only takes omotai or playwright-mcp`);
      }
      out.only = v;
    } else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (out.responsiveness < 0) out.responsiveness = Math.max(...out.sizes);
  return out;
}

/** The pages session `i` navigates, in order: rotated so sessions start on different pages. */
export function pagesFor(i: number, pages = SCALE_PAGES, n = NAVS_PER_SESSION): string[] {
  return Array.from({ length: n }, (_, k) => pages[(i + k) % pages.length]);
}

/** Nearest-rank percentile (`p` in 0..100) of `xs`; NaN when empty. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** Whether a process is a Chromium one (browser, zygote, renderer, GPU, utility, crashpad). */
export function isChromium(p: Pick<Proc, "comm" | "argv">): boolean {
  const base = p.argv[0]?.split("/").pop() ?? "";
  return /chrom|headless_shell/i.test(p.comm) || /chrom|headless_shell/i.test(base);
}

/** One system's figures at one size. */
export interface SystemRow {
  system: "omotai" | "playwright-mcp";
  sessions: number;
  ok: number;
  total: number;
  /** browser_navigate latency over the ok navigations, ms. */
  p50Ms: number;
  p95Ms: number;
  /**
   * The same over every navigation, a failed one at the time its answer took (a timeout
   * counts as the wait it cost): the ok ones alone flatter a system that drops the slowest.
   */
  allP50Ms?: number;
  allP95Ms?: number;
  /** Summed Chromium PSS while all sessions were open, KiB. */
  browserPssKiB: number;
  /** browserPssKiB / sessions. */
  browserPssPerSessionKiB: number;
  /** Chromium processes counted in that sample. */
  browserProcesses: number;
  /** Non-Chromium descendants' PSS in the same sample (bwrap, socat…), KiB. */
  helperPssKiB: number;
  /** Those descendants by `comm`: how many, and their PSS in KiB. */
  helpers: Record<string, { count: number; pssKiB: number }>;
  /** The server process's own PSS in the same sample, KiB (Omotai: the bench's process). */
  serverPssKiB: number;
  /** Chromium processes still descending from the server 2 s after every session ended. */
  leftAfter2s: number;
  /** Other (non-Chromium) descendants still there then. */
  otherLeftAfter2s: number;
  /** Their command lines. */
  otherLeftNames: string[];
  /** Ms from the end of the sessions until no Chromium process of the system was left
   * (polled up to 30 s; NaN if some were still there then). */
  allGoneMs: number;
  /** p50 over sessions of connect start to first browser_navigate answered (ok ones), ms. */
  firstNavigateP50Ms: number;
  /** First 120 characters of each failure. */
  failures: string[];
  /** Set when the size could not be run at all for this system. */
  error?: string;
}

/** One table row: both systems at one size. */
export interface SizeRow {
  sessions: number;
  omotai: SystemRow;
  peer: SystemRow;
}

function fmtMs(n: number): string {
  return Number.isFinite(n) ? `${Math.round(n)}` : "–";
}

function fmtMiB(kib: number): string {
  return Number.isFinite(kib) && kib > 0 ? `${(kib / 1024).toFixed(0)} MiB` : "–";
}

function cells(r: SystemRow): string[] {
  if (r.error && r.total === 0) return [`failed: ${r.error.slice(0, 60)}`, "–", "–", "–", "–"];
  return [
    `${r.ok}/${r.total}`,
    `${fmtMs(r.p50Ms)} / ${fmtMs(r.p95Ms)} ms`,
    fmtMiB(r.browserPssPerSessionKiB),
    `${r.leftAfter2s}`,
    `${fmtMs(r.firstNavigateP50Ms)} ms`,
  ];
}

/** The markdown table of the issue, one line per size. */
export function markdownTable(rows: SizeRow[]): string {
  const head = [
    "sessions",
    "Omotai: ok",
    "p50 / p95",
    "PSS per session",
    "left after 2 s",
    "first navigate p50",
    "Playwright MCP: ok",
    "p50 / p95",
    "PSS per session",
    "left after 2 s",
    "first navigate p50",
  ];
  const lines = [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => " --- ").join("|")}|`,
  ];
  for (const r of rows) {
    lines.push(`| ${[`${r.sessions}`, ...cells(r.omotai), ...cells(r.peer)].join(" | ")} |`);
  }
  return lines.join("\n");
}

/** A row for a system whose run failed before any figure. */
export function failedRow(
  system: SystemRow["system"],
  sessions: number,
  error: string,
): SystemRow {
  return {
    system,
    sessions,
    ok: 0,
    total: 0,
    p50Ms: NaN,
    p95Ms: NaN,
    browserPssKiB: 0,
    browserPssPerSessionKiB: 0,
    browserProcesses: 0,
    helperPssKiB: 0,
    helpers: {},
    serverPssKiB: 0,
    leftAfter2s: NaN,
    otherLeftAfter2s: NaN,
    otherLeftNames: [],
    allGoneMs: NaN,
    firstNavigateP50Ms: NaN,
    failures: [],
    error,
  };
}

/** Denied navigations per phase of the responsiveness measurement. */
export const VERDICT_PROBES = 20;
/** Approval rounds per phase. */
export const APPROVAL_ROUNDS = 5;

/** Some timings of one kind in one phase: the ok samples, and how many were tried. */
export interface Timings {
  /** Ms of each ok sample, in order. */
  samplesMs: number[];
  ok: number;
  total: number;
  p50Ms: number;
  p95Ms: number;
}

/** p50 / p95 over `samples` (the ok ones) out of `total` tried. */
export function timings(samples: number[], total: number): Timings {
  return {
    samplesMs: samples.map((x) => Math.round(x * 10) / 10),
    ok: samples.length,
    total,
    p50Ms: percentile(samples, 50),
    p95Ms: percentile(samples, 95),
  };
}

/** One phase (idle, or while the busy sessions navigate) of the responsiveness measurement. */
export interface Phase {
  /** Other sessions navigating meanwhile (0 at idle). */
  busySessions: number;
  /** Deno.loadavg() (the 1, 5 and 15 minute load averages) at the phase's start and end. */
  loadStart: number[];
  loadEnd: number[];
  /** Round trip of a `browser_navigate` the gate denies (`ORIGIN_NOT_ALLOWED`). */
  verdict: Timings;
  /** From the `browser_click` call to the held request listed by `GET /api/approvals`. */
  shown: Timings;
  /** From the approve `POST /api/approvals/{id}` to the click's result. */
  released: Timings;
  /** The busy sessions' navigations that ended during the probes (busy phase only). */
  busyNavs?: { ok: number; total: number; p50Ms: number };
  /** First 120 characters of each failure. */
  failures: string[];
}

/** The responsiveness measurement: a probe session at idle and beside N busy sessions. */
export interface Responsiveness {
  sessions: number;
  idle?: Phase;
  busy?: Phase;
  error?: string;
}

/**
 * The held request of a click, out of `GET /api/approvals?state=pending`: the first pending
 * POST to `origin` whose id was not seen before.
 */
export function pickHeld<T extends { id: string; origin: string; method: string; state: string }>(
  pending: T[],
  origin: string,
  seen: ReadonlySet<string> = new Set(),
): T | undefined {
  return pending.find((a) =>
    a.state === "pending" && a.origin === origin && a.method === "POST" && !seen.has(a.id)
  );
}

function pair(t: Timings | undefined): string {
  if (!t || t.total === 0) return "–";
  const n = t.ok === t.total ? `${t.total}` : `${t.ok}/${t.total} ok`;
  return `${fmtMs(t.p50Ms)} / ${fmtMs(t.p95Ms)} ms (${n})`;
}

/** The responsiveness table: one line per figure, idle beside busy. */
export function responsivenessTable(r: Responsiveness): string {
  const head = [`at ${r.sessions} busy sessions`, "idle p50 / p95", "busy p50 / p95"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => " --- ").join("|")}|`];
  const line = (what: string, k: "verdict" | "shown" | "released") =>
    lines.push(`| ${what} | ${pair(r.idle?.[k])} | ${pair(r.busy?.[k])} |`);
  line("verdict (denied navigate)", "verdict");
  line("approval shown to operator", "shown");
  line("approved write released", "released");
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// /proc
// ---------------------------------------------------------------------------------------------

/** What `sampleTree` found under a process. */
export interface TreeSample {
  browsers: Proc[];
  others: Proc[];
  /** Summed PSS of the Chromium processes, KiB. */
  browserPssKiB: number;
  otherPssKiB: number;
  helpers: Record<string, { count: number; pssKiB: number }>;
  rootPssKiB: number;
}

/**
 * What descends from `root` now (less the subtrees of `skip`): Chromium processes and the
 * others, with their PSS.
 */
export async function sampleTree(root: number, skip: number[] = []): Promise<TreeSample> {
  const tree = descendants(root, processes(), skip);
  const browsers = tree.filter(isChromium);
  const others = tree.filter((p) => !isChromium(p));
  const helpers: Record<string, { count: number; pssKiB: number }> = {};
  for (const p of others) {
    const h = helpers[p.comm] ??= { count: 0, pssKiB: 0 };
    h.count++;
    h.pssKiB += await pssKiB(p.pid);
  }
  const sum = async (ps: Proc[]) =>
    (await Promise.all(ps.map((p) => pssKiB(p.pid)))).reduce((a, b) => a + b, 0);
  return {
    browsers,
    others,
    browserPssKiB: await sum(browsers),
    otherPssKiB: await sum(others),
    helpers,
    rootPssKiB: await pssKiB(root),
  };
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

interface NavOutcome {
  ok: boolean;
  ms: number;
  failure?: string;
}

interface SessionOutcome {
  navs: NavOutcome[];
  firstNavigateMs?: number;
  client?: Client;
  transport?: StreamableHTTPClientTransport;
  failure?: string;
}

async function navigate(client: Client, url: string): Promise<NavOutcome> {
  const t0 = performance.now();
  try {
    const res = await client.callTool({ name: "browser_navigate", arguments: { url } }, undefined, {
      timeout: CALL_TIMEOUT_MS,
    });
    const ms = performance.now() - t0;
    const text = ((res.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
    if (res.isError === true || text.startsWith("### Error")) {
      return { ok: false, ms, failure: text.replace(/\s+/g, " ").slice(0, 120) };
    }
    return { ok: true, ms };
  } catch (err) {
    const msg = `thrown: ${err instanceof Error ? err.message : String(err)}`;
    return { ok: false, ms: performance.now() - t0, failure: oneLine(msg).slice(0, 120) };
  }
}

/** One session: connect, then its pages in order; the client is left open. */
async function runSession(
  transport: StreamableHTTPClientTransport,
  urls: string[],
): Promise<SessionOutcome> {
  const client = new Client({ name: "omotai-scale-bench", version: "0" });
  const out: SessionOutcome = { navs: [], transport };
  const t0 = performance.now();
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  } catch (err) {
    out.failure = `connect: ${err instanceof Error ? err.message : String(err)}`.slice(0, 120);
    await client.close().catch(() => {});
    return out;
  }
  out.client = client;
  for (const url of urls) {
    const nav = await navigate(client, url);
    if (out.navs.length === 0 && nav.ok) out.firstNavigateMs = performance.now() - t0;
    out.navs.push(nav);
  }
  return out;
}

/** Ends a session the way a client should: DELETE of the session, then the transport closed. */
export async function endSession(
  s: { client?: Client; transport?: StreamableHTTPClientTransport },
): Promise<string | undefined> {
  let problem: string | undefined;
  try {
    await s.transport?.terminateSession();
  } catch (err) {
    problem = `DELETE: ${err instanceof Error ? err.message : String(err)}`.slice(0, 120);
  }
  await s.client?.close().catch(() => {});
  return problem;
}

/** A system under test: how to get a transport for one more client, and whose tree is its. */
interface System {
  name: SystemRow["system"];
  transport(): StreamableHTTPClientTransport | Promise<StreamableHTTPClientTransport>;
  /** The process whose descendants are this system's browsers. */
  root: number;
  /** Subtrees under `root` that are not this system's (the peer's, when root is this process). */
  skip: number[];
}

/** Runs `n` concurrent sessions on `sys` and measures them; the system stays up. */
async function measure(sys: System, n: number, base: string): Promise<SystemRow> {
  const transports = await Promise.all(Array.from({ length: n }, () => sys.transport()));
  const sessions = await Promise.all(
    transports.map((t, i) => runSession(t, pagesFor(i).map((p) => `${base}/${p}/`))),
  );
  // All N sessions are open, each after its last navigation.
  const sample = await sampleTree(sys.root, sys.skip);
  const ended = await Promise.all(sessions.map(endSession));
  const endedAt = performance.now();
  await new Promise((r) => setTimeout(r, LEFT_AFTER_MS));
  const after = await sampleTree(sys.root, sys.skip);
  // How long the leftovers, if any, take to go (the figure above is the one the issue asks).
  let allGoneMs = after.browsers.length === 0 ? LEFT_AFTER_MS : NaN;
  while (Number.isNaN(allGoneMs) && performance.now() - endedAt < GONE_POLL_MS) {
    await new Promise((r) => setTimeout(r, 250));
    const now = descendants(sys.root, processes(), sys.skip).filter(isChromium);
    if (now.length === 0) allGoneMs = performance.now() - endedAt;
  }

  const navs = sessions.flatMap((s) => s.navs);
  const okMs = navs.filter((v) => v.ok).map((v) => v.ms);
  const failures = [
    ...sessions.flatMap((s) => s.failure ? [s.failure] : []),
    ...navs.flatMap((v) => v.failure ? [v.failure] : []),
    ...ended.flatMap((e) => e ? [e] : []),
  ];
  const firsts = sessions.flatMap((s) =>
    s.firstNavigateMs === undefined ? [] : [s.firstNavigateMs]
  );
  return {
    system: sys.name,
    sessions: n,
    ok: okMs.length,
    total: n * NAVS_PER_SESSION,
    p50Ms: percentile(okMs, 50),
    p95Ms: percentile(okMs, 95),
    allP50Ms: percentile(navs.map((v) => v.ms), 50),
    allP95Ms: percentile(navs.map((v) => v.ms), 95),
    browserPssKiB: sample.browserPssKiB,
    browserPssPerSessionKiB: sample.browserPssKiB / n,
    browserProcesses: sample.browsers.length,
    helperPssKiB: sample.otherPssKiB,
    helpers: sample.helpers,
    serverPssKiB: sample.rootPssKiB,
    leftAfter2s: after.browsers.length,
    otherLeftAfter2s: after.others.length,
    otherLeftNames: after.others.map((p) => p.argv.join(" ").slice(0, 160) || p.comm),
    allGoneMs,
    firstNavigateP50Ms: percentile(firsts, 50),
    failures,
  };
}

// ---------------------------------------------------------------------------------------------
// The two systems
// ---------------------------------------------------------------------------------------------

/** Omotai in this process, default isolation (`auto`), allowing the corpus origin. */
async function runOmotai(n: number, base: string, skip: number[]): Promise<SystemRow> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-scale-" });
  let runtime: Runtime | undefined;
  try {
    runtime = await startTestRuntime(dir, `allowed_origins: [${base}]\n`);
    if (runtime.isolation.kind !== "netns") {
      console.log(`  (omotai: no network namespace here: ${runtime.isolation.reason})`);
    }
    const rt = runtime;
    return await measure(
      {
        name: "omotai",
        transport: () => agentTransport(rt, "http") as Promise<StreamableHTTPClientTransport>,
        root: Deno.pid,
        skip,
      },
      n,
      base,
    );
  } finally {
    try {
      await runtime?.[Symbol.asyncDispose]();
    } catch (err) {
      console.log(`  omotai: runtime dispose failed: ${errText(err)}`);
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** A free loopback TCP port (closed again at once). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A running Playwright MCP over Streamable HTTP on a free port. */
export interface PeerServer extends AsyncDisposable {
  pid: number;
  url: URL;
  /** The last of its stderr, for failures. */
  stderrTail(): string;
}

/**
 * Starts Playwright MCP (the pinned peer, installed into bench/.peer) as an HTTP server:
 * `--port P --isolated --headless --executable-path <system chromium>` (and `--no-sandbox` as
 * root, as peerCommand does), bound to 127.0.0.1 and told to accept that as the Host header.
 */
export async function startPeerHttp(): Promise<PeerServer> {
  const cli = await ensurePeerInstalled();
  const port = freePort();
  const cwd = await Deno.makeTempDir({ prefix: "bench-peer-scale-" });
  const args = [
    cli,
    "--port",
    `${port}`,
    "--host",
    "127.0.0.1",
    // It names its loopback server "localhost" and refuses any other Host header.
    "--allowed-hosts",
    `127.0.0.1:${port}`,
    "--isolated",
    "--headless",
    "--executable-path",
    findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    ...(runningAsRoot() ? ["--no-sandbox"] : []),
  ];
  const child = new Deno.Command("node", {
    args,
    cwd,
    // Its browser profiles (`--isolated`) go to the temp dir; this one is removed with it.
    env: { TMPDIR: cwd },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let tail = "";
  const drain = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) tail = (tail + dec.decode(chunk)).slice(-4000);
  })().catch(() => {});
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const dispose = async () => {
    // Whatever it left running is killed too, so no size inherits another's browsers.
    const mine = descendants(child.pid).map((p) => p.pid);
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const done = await Promise.race([
      child.status.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5_000)),
    ]);
    if (!done) {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
    }
    for (const pid of mine) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    await drain;
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  };
  // Ready once the port answers.
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      c.close();
      break;
    } catch {
      if (Date.now() > deadline) {
        await dispose();
        throw new Error(`playwright-mcp did not listen on ${port}: ${tail.slice(-300)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { pid: child.pid, url, stderrTail: () => tail, [Symbol.asyncDispose]: dispose };
}

async function runPeer(n: number, base: string, peerPids: number[]): Promise<SystemRow> {
  const peer = await startPeerHttp();
  peerPids.push(peer.pid);
  try {
    const row = await measure(
      {
        name: "playwright-mcp",
        transport: () => new StreamableHTTPClientTransport(peer.url),
        root: peer.pid,
        skip: [],
      },
      n,
      base,
    );
    if (row.ok < row.total) row.failures.push(`stderr: ${oneLine(peer.stderrTail()).slice(-120)}`);
    return row;
  } finally {
    await peer[Symbol.asyncDispose]();
  }
}

// ---------------------------------------------------------------------------------------------
// Responsiveness: a probe session's verdicts and approvals, at idle and beside N busy sessions
// ---------------------------------------------------------------------------------------------

/** An origin the policy does not allow: the gate denies it before any browser work. */
const DENIED_URL = "http://127.0.0.9:9/";
/** Pause between two denied navigations. */
const VERDICT_SPACING_MS = 250;
/** How often the operator's side lists the pending approvals. */
const APPROVAL_POLL_MS = 20;
/** How long a click may take to be held before the round counts as failed. */
const HOLD_WAIT_MS = 60_000;
/** How long the busy sessions may take to have each answered one navigation. */
const BUSY_READY_MS = 180_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loopback site with one POST form (`/`) whose submission (`/done`) answers "Sent". */
function serveFormSite(): { server: Deno.HttpServer<Deno.NetAddr>; posts(): number } {
  const page = (title: string, body: string) =>
    new Response(`<!doctype html><title>${title}</title>${body}`, {
      headers: { "content-type": "text/html; charset=utf-8" },
    });
  const state = { posts: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path === "/") {
      return page(
        "Form",
        `<form method="post" action="/done"><input name="q" value="x"><button>Send</button></form>`,
      );
    }
    if (req.method === "POST" && path === "/done") {
      await req.body?.cancel();
      state.posts++;
      return page("Sent", "<p>Sent</p>");
    }
    await req.body?.cancel();
    return new Response("not found", { status: 404 });
  });
  return { server, posts: () => state.posts };
}

/**
 * A tool call's text and error flag, with its round trip; never throws. The client stops
 * waiting after `timeoutMs` (an error then, naming the timeout).
 */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number = CALL_TIMEOUT_MS,
): Promise<{ text: string; isError: boolean; ms: number }> {
  const t0 = performance.now();
  try {
    const res = await client.callTool({ name, arguments: args }, undefined, {
      timeout: timeoutMs,
    });
    const text = ((res.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
    return { text, isError: res.isError === true, ms: performance.now() - t0 };
  } catch (err) {
    return { text: `thrown: ${errText(err)}`, isError: true, ms: performance.now() - t0 };
  }
}

interface BusyNav extends NavOutcome {
  endedAt: number;
}

/** N sessions navigating corpus pages in a loop until stopped. */
function startBusy(rt: Runtime, n: number, base: string) {
  let stopping = false;
  let answered = 0;
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => resolveReady = r);
  const firstDone = () => {
    if (++answered >= n) resolveReady();
  };
  const navs: BusyNav[] = [];
  const failures: string[] = [];
  const loops = Array.from({ length: n }, async (_, i) => {
    const transport = await agentTransport(rt, "http") as StreamableHTTPClientTransport;
    const client = new Client({ name: "omotai-scale-bench-busy", version: "0" });
    const s: SessionOutcome = { navs: [], transport };
    try {
      await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
      s.client = client;
    } catch (err) {
      failures.push(`busy connect: ${errText(err)}`.slice(0, 120));
      firstDone();
      await client.close().catch(() => {});
      return;
    }
    try {
      for (let k = 0; !stopping; k++) {
        const nav = await navigate(client, `${base}/${SCALE_PAGES[(i + k) % SCALE_PAGES.length]}/`);
        navs.push({ ...nav, endedAt: performance.now() });
        if (k === 0) firstDone();
        if (!nav.ok) {
          failures.push(`busy: ${nav.failure}`);
          await sleep(250);
        }
      }
    } finally {
      const problem = await endSession(s);
      if (problem) failures.push(problem);
    }
  });
  return {
    navs,
    failures,
    /** Resolves once every session answered (or failed) its first navigation. */
    ready,
    /** Stops the loops after their current navigation and ends the sessions. */
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** What the probe session needs: its client, the API, and the form site. */
interface Probe {
  client: Client;
  api(path: string, init?: RequestInit): Promise<Response>;
  formOrigin: string;
}

interface Held {
  id: string;
  origin: string;
  method: string;
  state: string;
}

/** One approval round: form page, click held, listed, approved, released. */
async function approvalRound(
  p: Probe,
  seen: Set<string>,
): Promise<{ shownMs?: number; releasedMs?: number; failure?: string }> {
  const page = await callTool(p.client, "browser_navigate", { url: `${p.formOrigin}/` });
  if (page.isError) return { failure: `form page: ${oneLine(page.text).slice(0, 100)}` };
  let ref: string;
  try {
    ref = refOf(page.text, /button "Send"/);
  } catch {
    return { failure: `no Send button: ${oneLine(page.text).slice(0, 100)}` };
  }
  const t0 = performance.now();
  let settled = false;
  const click = callTool(p.client, "browser_click", { ref }).finally(() => settled = true);
  let held: Held | undefined;
  while (!settled && performance.now() - t0 < HOLD_WAIT_MS) {
    try {
      const res = await p.api("/api/approvals?state=pending");
      held = res.ok ? pickHeld(await res.json() as Held[], p.formOrigin, seen) : undefined;
      if (!res.ok) await res.body?.cancel();
    } catch { /* the next poll tells */ }
    if (held) break;
    await sleep(APPROVAL_POLL_MS);
  }
  if (!held) {
    const r = await click;
    return { failure: `not held: ${oneLine(r.text).slice(0, 100)}` };
  }
  const shownMs = performance.now() - t0;
  seen.add(held.id);
  const t1 = performance.now();
  let decided: string;
  try {
    const res = await p.api(`/api/approvals/${held.id}`, {
      method: "POST",
      body: JSON.stringify({ decision: "approve" }),
    });
    decided = res.status === 200 ? "" : `${res.status} ${await res.text()}`;
    if (res.status === 200) await res.body?.cancel();
  } catch (err) {
    decided = errText(err);
  }
  const r = await click;
  const releasedMs = performance.now() - t1;
  if (decided) return { shownMs, failure: `approve: ${oneLine(decided).slice(0, 100)}` };
  if (r.isError || !/Sent|approved/.test(r.text)) {
    return { shownMs, failure: `click: ${oneLine(r.text).slice(0, 100)}` };
  }
  return { shownMs, releasedMs };
}

/** The probes of one phase: denied navigations, then approval rounds. */
async function probePhase(
  p: Probe,
  seen: Set<string>,
): Promise<Pick<Phase, "verdict" | "shown" | "released" | "failures">> {
  const failures: string[] = [];
  const verdicts: number[] = [];
  for (let k = 0; k < VERDICT_PROBES; k++) {
    if (k > 0) await sleep(VERDICT_SPACING_MS);
    const r = await callTool(p.client, "browser_navigate", { url: DENIED_URL });
    if (/^denied: ORIGIN_NOT_ALLOWED/.test(r.text)) verdicts.push(r.ms);
    else failures.push(`verdict: ${oneLine(r.text).slice(0, 110)}`);
  }
  const shown: number[] = [];
  const released: number[] = [];
  for (let k = 0; k < APPROVAL_ROUNDS; k++) {
    const r = await approvalRound(p, seen);
    if (r.shownMs !== undefined) shown.push(r.shownMs);
    if (r.releasedMs !== undefined) released.push(r.releasedMs);
    if (r.failure) failures.push(r.failure.slice(0, 120));
  }
  return {
    verdict: timings(verdicts, VERDICT_PROBES),
    shown: timings(shown, APPROVAL_ROUNDS),
    released: timings(released, APPROVAL_ROUNDS),
    failures,
  };
}

/**
 * A runtime of its own (the corpus and the form site allowed, read-only with approvals), one
 * probe session: its probes at idle, then again while `n` other sessions navigate the corpus
 * in a loop (once each of them has answered one navigation), then those stopped.
 */
async function runResponsiveness(n: number, base: string): Promise<Responsiveness> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-scale-resp-" });
  const site = serveFormSite();
  const formOrigin = `http://127.0.0.1:${site.server.addr.port}`;
  let runtime: Runtime | undefined;
  let probe: SessionOutcome | undefined;
  const out: Responsiveness = { sessions: n };
  try {
    runtime = await startTestRuntime(
      dir,
      `allowed_origins: [${base}, ${formOrigin}]\nread_only: true\nconfirm_writes: true\n` +
        `confirm_timeout_seconds: 300\nmax_confirmations: 1000\n`,
    );
    const rt = runtime;
    const transport = await agentTransport(rt, "http", "probe") as StreamableHTTPClientTransport;
    const client = new Client({ name: "omotai-scale-bench-probe", version: "0" });
    probe = { navs: [], transport };
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
    probe.client = client;
    const p: Probe = {
      client,
      formOrigin,
      api: (path, init = {}) =>
        fetch(new URL(path, rt.url), {
          ...init,
          headers: {
            Authorization: `Bearer ${rt.adminToken}`,
            "content-type": "application/json",
            ...init.headers,
          },
        }),
    };
    const seen = new Set<string>();
    // Warm-up, not counted: the probe's browser starts, and one denied navigation.
    const warm = await callTool(client, "browser_navigate", { url: `${formOrigin}/` });
    if (warm.isError) throw new Error(`probe warm-up: ${oneLine(warm.text).slice(0, 150)}`);
    await callTool(client, "browser_navigate", { url: DENIED_URL });

    const idleStart = Deno.loadavg();
    const idle = await probePhase(p, seen);
    out.idle = { busySessions: 0, loadStart: idleStart, loadEnd: Deno.loadavg(), ...idle };
    console.log(`  responsiveness idle: ${describePhase(out.idle)}`);

    const busy = startBusy(rt, n, base);
    try {
      const ready = await Promise.race([
        busy.ready.then(() => true),
        sleep(BUSY_READY_MS).then(() => false),
      ]);
      if (!ready) busy.failures.push(`not every busy session answered within ${BUSY_READY_MS} ms`);
      const busyStart = Deno.loadavg();
      const from = performance.now();
      const probes = await probePhase(p, seen);
      const to = performance.now();
      const loadEnd = Deno.loadavg();
      const during = busy.navs.filter((v) => v.endedAt >= from && v.endedAt <= to);
      const okMs = during.filter((v) => v.ok).map((v) => v.ms);
      out.busy = {
        busySessions: n,
        loadStart: busyStart,
        loadEnd,
        ...probes,
        busyNavs: { ok: okMs.length, total: during.length, p50Ms: percentile(okMs, 50) },
      };
    } finally {
      await busy.stop();
      out.busy?.failures.push(...busy.failures.slice(0, 20));
    }
    console.log(`  responsiveness busy: ${describePhase(out.busy)}`);
    if (site.posts() !== (out.idle.released.ok + out.busy.released.ok)) {
      out.busy.failures.push(
        `the form site got ${site.posts()} posts for ${
          out.idle.released.ok + out.busy.released.ok
        } released`,
      );
    }
  } catch (err) {
    out.error = errText(err);
  } finally {
    if (probe) await endSession(probe);
    try {
      await runtime?.[Symbol.asyncDispose]();
    } catch (err) {
      console.log(`  responsiveness: runtime dispose failed: ${errText(err)}`);
    }
    await site.server.shutdown().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return out;
}

function describePhase(ph: Phase | undefined): string {
  if (!ph) return "not run";
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  const busy = ph.busyNavs
    ? `, busy navigations ended meanwhile ${ph.busyNavs.ok}/${ph.busyNavs.total} ok ` +
      `(p50 ${fmtMs(ph.busyNavs.p50Ms)} ms)`
    : "";
  return `verdict ${pair(ph.verdict)}, shown ${pair(ph.shown)}, released ${pair(ph.released)}` +
    `${busy}; load ${load(ph.loadStart)} -> ${load(ph.loadEnd)}`;
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

function errText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 200);
}

function describe(r: SystemRow): string {
  const mib = (k: number) => `${(k / 1024).toFixed(0)} MiB`;
  if (r.error) return `${r.system}: FAILED ${r.error}`;
  return `${r.system}: ${r.ok}/${r.total} ok, p50 ${fmtMs(r.p50Ms)} p95 ${fmtMs(r.p95Ms)} ms ` +
    `(every navigation, failures at their time: ${fmtMs(r.allP50Ms ?? NaN)} / ${
      fmtMs(r.allP95Ms ?? NaN)
    } ms), ` +
    `chromium ${mib(r.browserPssKiB)} in ${r.browserProcesses} processes ` +
    `(${mib(r.browserPssPerSessionKiB)}/session), helpers ${mib(r.helperPssKiB)} ${
      JSON.stringify(r.helpers)
    }, ` +
    `server process ${mib(r.serverPssKiB)}, left after 2 s: ${r.leftAfter2s} chromium + ` +
    `${r.otherLeftAfter2s} other [${r.otherLeftNames.join("; ")}], all gone after ` +
    `${
      Number.isNaN(r.allGoneMs) ? `> ${GONE_POLL_MS}` : fmtMs(r.allGoneMs)
    } ms, first navigate p50 ${fmtMs(r.firstNavigateP50Ms)} ms`;
}

if (import.meta.main) {
  const args = parseArgs(Deno.args);
  const corpus = serveCorpus();
  const base = `http://127.0.0.1:${corpus.addr.port}`;
  const rows: SizeRow[] = [];
  const peerPids: number[] = [];
  let responsiveness: Responsiveness | undefined;
  const loadBefore = Deno.loadavg();
  try {
    for (const n of args.sizes) {
      console.log(`size ${n}: load ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
      let omotai = failedRow("omotai", n, "not run (--only)");
      if (args.only !== "playwright-mcp") {
        try {
          omotai = await runOmotai(n, base, peerPids);
        } catch (err) {
          omotai = failedRow("omotai", n, errText(err));
        }
        console.log(`  ${describe(omotai)}`);
      }
      let peer = failedRow("playwright-mcp", n, "not run (--only)");
      if (args.only !== "omotai") {
        try {
          peer = await runPeer(n, base, peerPids);
        } catch (err) {
          peer = failedRow("playwright-mcp", n, errText(err));
        }
        console.log(`  ${describe(peer)}`);
      }
      rows.push({ sessions: n, omotai, peer });
    }
    if (args.responsiveness > 0) {
      const n = args.responsiveness;
      console.log(
        `responsiveness at ${n} busy sessions: load ${
          Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
        }`,
      );
      responsiveness = await runResponsiveness(n, base);
      if (responsiveness.error) console.log(`  responsiveness: FAILED ${responsiveness.error}`);
    }
  } finally {
    await corpus.shutdown();
  }
  const loadAfter = Deno.loadavg();
  console.log("");
  console.log(
    `N concurrent Streamable HTTP sessions, ${NAVS_PER_SESSION} corpus pages each (${
      SCALE_PAGES.join(", ")
    }, rotated); Playwright MCP ${PLAYWRIGHT_MCP_VERSION}. PSS per session is browser-only: ` +
      `the Chromium processes' summed PSS / N, sampled with all N sessions open.`,
  );
  console.log("");
  console.log(markdownTable(rows));
  console.log("");
  console.log(
    `${navigator.hardwareConcurrency} cores; load average before ` +
      `${loadBefore.map((x) => x.toFixed(2)).join(" ")}, after ${
        loadAfter.map((x) => x.toFixed(2)).join(" ")
      }`,
  );
  for (const r of rows) {
    for (const s of [r.omotai, r.peer]) {
      console.log(
        `size ${r.sessions} ${s.system}: server process PSS ${fmtMiB(s.serverPssKiB)}` +
          (s.system === "omotai" ? " (the bench's own process: runtime + clients + corpus)" : ""),
      );
      for (const f of s.failures.slice(0, 10)) console.log(`    failure: ${f}`);
      if (s.failures.length > 10) console.log(`    … ${s.failures.length - 10} more`);
    }
  }
  if (responsiveness) {
    const r = responsiveness;
    console.log("");
    console.log(
      `Responsiveness, Omotai only (Playwright MCP has no verdicts or approvals): one probe ` +
        `session on a runtime of its own (read_only, confirm_writes), at idle and while ` +
        `${r.sessions} other sessions navigate the corpus in a loop. Verdict: a ` +
        `browser_navigate to ${DENIED_URL}, denied by the gate (ORIGIN_NOT_ALLOWED), ` +
        `${VERDICT_PROBES} per phase ${VERDICT_SPACING_MS} ms apart. Approval: a POST form's ` +
        `click; shown = click call to the held request listed by GET /api/approvals (polled ` +
        `every ${APPROVAL_POLL_MS} ms), released = approve POST to the click's result; ` +
        `${APPROVAL_ROUNDS} rounds per phase. Runtime, clients and sites share this process.`,
    );
    console.log("");
    if (r.error) console.log(`failed: ${r.error}`);
    console.log(responsivenessTable(r));
    console.log("");
    for (const [name, ph] of [["idle", r.idle], ["busy", r.busy]] as const) {
      console.log(`${name}: ${describePhase(ph)}`);
      for (const f of ph?.failures.slice(0, 10) ?? []) console.log(`    failure: ${f}`);
      if ((ph?.failures.length ?? 0) > 10) console.log(`    … ${ph!.failures.length - 10} more`);
    }
  }
  if (args.json) {
    await Deno.writeTextFile(
      args.json,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          cores: navigator.hardwareConcurrency,
          loadBefore,
          loadAfter,
          pages: SCALE_PAGES,
          navsPerSession: NAVS_PER_SESSION,
          playwrightMcp: PLAYWRIGHT_MCP_VERSION,
          rows,
          responsiveness,
        },
        (_k, v) => typeof v === "number" && !Number.isFinite(v) ? null : v,
        2,
      ) + "\n",
    );
    console.log(`wrote ${args.json}`);
  }
}
