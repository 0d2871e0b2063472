/**
 * What a hostile page does to its own session and to the others, on Omotai and on the peer
 * (Playwright MCP, bench/peer.ts), side by side in one run (issue 36, item 8). For each page
 * of `BENCH_PAGES` and each system, on a fresh server with two sessions (Omotai: one runtime
 * in this process, each session its own browser; the peer: ONE server over Streamable HTTP,
 * whose shared browser holds both sessions' contexts):
 *
 * - session B navigates the healthy page `BASELINE_NAVS` times: its baseline p50 / p95;
 * - session A navigates to the hostile page (its call bounded at `HOSTILE_CALL_MS`; a page
 *   whose harm comes after its load, the log flood, is then left to run `DWELL_MS`), then to
 *   the healthy page again and again until one answers it (each call bounded by what is left
 *   of `RECOVERY_WINDOW_MS`): the time from the hostile call's end (or the stay's) to that
 *   answer, or
 *   "> 60 s", or "never" when the system's process died. A dialog the hostile call's answer
 *   shows, or one in the way of a navigation, is answered with the system's own
 *   `browser_handle_dialog` (accept), as an agent would, at most `DIALOG_ANSWERS` times in
 *   all (the dialog chain: on both systems the agent answers dialog after dialog until none
 *   is left in the way);
 * - meanwhile B navigates the healthy page in a loop (each call bounded at `B_CALL_MS`): its
 *   p50 / p95 during the attack (ok ones; a failure counts at the time it took in the
 *   "every call" p95);
 * - the browsers' memory, sampled every `SAMPLE_MS`: the summed PSS of every Chromium process
 *   of the system (both sessions: the peer has one browser for both), its peak; on Omotai
 *   also the kernel's own peak of the hostile session's browser group(s) (cgroup v2
 *   `memory.peak`, v1 `memory.max_usage_in_bytes`), read until the group is removed;
 * - whether the system survived: its process runs and B answers once more after;
 * - for a page that opens windows (the popup flood): the popups that ran and the most pages
 *   running at once, as the site's census counts them (each holds a socket to the site while
 *   it lives), and how many tabs A's `browser_tabs` lists after.
 *
 * Every loop is bounded in count and time; the pages bound themselves (tests/fixtures/
 * hostile_site.ts), each row on a fresh site (its census its own), served on two origins that
 * Omotai allows. The systems run one after the other, never at once.
 *
 * Run: deno run -A bench/hostile_bench.ts [--pages /chain,/popup-flood] [--only omotai|playwright-mcp]
 * [--json PATH]. Heavy (minutes per page): run it alone.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { join } from "node:path";
import { agentTransport, startTestRuntime } from "../tests/helpers/harness.ts";
import { alive } from "../tests/helpers/processes.ts";
import {
  DIALOG_CHAIN_ROUTE,
  HOSTILE_ROUTES,
  LOG_FLOOD_ROUTES,
  POPUP_FLOOD_ROUTES,
  serveHostileSite,
} from "../tests/fixtures/hostile_site.ts";
import { CGROUP_DIR, locateCgroups } from "../runtime/isolation/cgroup_place.ts";
import type { Runtime } from "../runtime/cli/start.ts";
import { PLAYWRIGHT_MCP_VERSION } from "./peer.ts";
import {
  callTool,
  endSession,
  percentile,
  sampleTree,
  startPeerHttp,
  type Timings,
  timings,
} from "./scale_bench.ts";

/** The bound the issue sets on a session's answer after a hostile page. */
export const ANSWER_BOUND_MS = 30_000;
/** How long after the hostile call's end A may take to answer a healthy page before "> 60 s". */
export const RECOVERY_WINDOW_MS = 60_000;
/** The hostile call's own bound (the client stops waiting). */
const HOSTILE_CALL_MS = 120_000;
/** Each of B's calls' bound. */
const B_CALL_MS = 60_000;
/** B's navigations before the attack. */
export const BASELINE_NAVS = 8;
/** B's navigations during the attack at most (the window bounds them first). */
const B_MAX_NAVS = 500;
/** Dialogs A answers at most on its way back. */
const DIALOG_ANSWERS = 1_300;
/** How often memory is sampled. */
const SAMPLE_MS = 500;
/**
 * What a healthy page's answer shows: Omotai's snapshot heading, the peer's page title (over
 * HTTP it writes its snapshot to a file and answers with the title and the file's name).
 */
const HEALTHY = /# Healthy page\b|^- Page Title: Healthy$/m;

/** One hostile page of the bench: one row per system. */
export interface BenchPage {
  path: string;
  /** What it does, for the table. */
  does: string;
  /**
   * How long A stays on the page after its call before going back: a page whose harm comes
   * after its load (a flood) would end the moment A left it.
   */
  dwellMs: number;
  /** The page opens windows: the row counts the pages that ran and the tabs listed. */
  opensWindows: boolean;
}

/** A's stay on a page that does its harm after its load. */
export const DWELL_MS = 30_000;
/** The pages that do their harm after their load (the log flood, the popups running). */
const HARM_AFTER_LOAD = new Set(["/log-flood", "/popup-flood", "/popup-hang-flood"]);
/** The pages that open windows. */
const OPENS_WINDOWS = new Set(["/popup-flood", "/popup-hang-flood"]);

/**
 * The pages, as data: a new hostile page is one more row. The hostile site's first pages, the
 * log flood, the dialog chain and the popup flood; not the healthy page, nor a part of another
 * page (a worker's script, a popup, the census socket).
 */
export const BENCH_PAGES: readonly BenchPage[] = [
  ...HOSTILE_ROUTES,
  ...LOG_FLOOD_ROUTES,
  DIALOG_CHAIN_ROUTE,
  ...POPUP_FLOOD_ROUTES,
]
  .filter((r) => r.path !== "/healthy" && r.of === undefined && r.type !== "script")
  .map((r) => ({
    path: r.path,
    does: r.does,
    dwellMs: HARM_AFTER_LOAD.has(r.path) ? DWELL_MS : 0,
    opensWindows: OPENS_WINDOWS.has(r.path),
  }));

/** The systems compared. */
export type SystemName = "omotai" | "playwright-mcp";

// ---------------------------------------------------------------------------------------------
// Pure parts (tested by hostile_bench_test.ts)
// ---------------------------------------------------------------------------------------------

/** Command-line options. */
export interface HostileArgs {
  pages: BenchPage[];
  only?: SystemName;
  json?: string;
}

/**
 * Parses `--pages /memory,/workers` (or `--pages=…`), `--only omotai|playwright-mcp` and
 * `--json PATH`; the pages keep the order of `all`.
 */
export function parseArgs(argv: string[], all: readonly BenchPage[] = BENCH_PAGES): HostileArgs {
  const out: HostileArgs = { pages: [...all] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--pages") {
      const paths = value().split(",").map((s) => s.trim()).filter(Boolean);
      const unknown = paths.filter((p) => !all.some((b) => b.path === p));
      if (paths.length === 0 || unknown.length > 0) {
        throw new Error(
          `--pages takes paths among ${all.map((b) => b.path).join(", ")}` +
            (unknown.length ? ` (not: ${unknown.join(", ")})` : ""),
        );
      }
      out.pages = all.filter((b) => paths.includes(b.path));
    } else if (flag === "--only") {
      const v = value();
      if (v !== "omotai" && v !== "playwright-mcp") {
        throw new Error(`--only takes omotai or playwright-mcp`);
      }
      out.only = v;
    } else if (flag === "--json") out.json = value();
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return out;
}

/** One system's figures on one page. */
export interface HostileRow {
  page: string;
  system: SystemName;
  /** The hostile call: how long it took, whether it was an error, its first words. */
  hostile: { ms: number; isError: boolean; text: string };
  /** How long A then stayed on the page (`BenchPage.dwellMs`). */
  dwellMs: number;
  /** Ms from the hostile call's end until A answered the healthy page; absent if it did not. */
  recoveredMs?: number;
  /** A's healthy-page calls until it answered (or the window closed). */
  recoveryCalls: number;
  /** Dialogs A answered on its way back. */
  dialogsAnswered: number;
  /**
   * A page that opens windows: the popups that ran and the most pages running at once (the
   * site's census: the hostile page and its popups), the tabs A's `browser_tabs` listed after
   * (absent if its answer did not say).
   */
  windows?: { popupsRan: number; maxAlive: number; tabsListed?: number };
  /** B's navigations before the attack. */
  baseline: Timings;
  /** B's navigations during the attack (the ok ones' p50 / p95, out of all). */
  during: Timings;
  /** p95 of all B's navigations during the attack, a failure at the time it took. */
  duringAllP95Ms: number;
  /** Peak of the summed PSS of the system's Chromium processes (both sessions), KiB. */
  browserPeakKiB: number;
  /** Their summed PSS before the attack, KiB. */
  browserBeforeKiB: number;
  /** Omotai: the kernel's peak of the hostile session's browser group(s), bytes. */
  groupPeakBytes?: number;
  /** Omotai: that group's memory limit, bytes. */
  groupLimitBytes?: number;
  /** The system's process still runs and B answered once more after the attack. */
  survived: boolean;
  /** Deno.loadavg() at the row's start and end. */
  loadStart: number[];
  loadEnd: number[];
  /** First 120 characters of each failure. */
  failures: string[];
  /** Set when the row could not be run. */
  error?: string;
}

/** Seconds with one decimal. */
function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function ms(n: number): string {
  return Number.isFinite(n) ? `${Math.round(n)}` : "–";
}

function mib(bytes: number | undefined): string {
  return bytes !== undefined && Number.isFinite(bytes) && bytes > 0
    ? `${Math.round(bytes / 2 ** 20)} MiB`
    : "–";
}

/**
 * The recovery cell: seconds (marked past the issue's 30 s), "> 60 s" when A did not answer
 * within the window, "never" when the system's process died.
 */
export function recoveryCell(r: Pick<HostileRow, "recoveredMs" | "survived">): string {
  if (r.recoveredMs !== undefined) {
    return `${secs(r.recoveredMs)}${r.recoveredMs > ANSWER_BOUND_MS ? " (over 30 s)" : ""}`;
  }
  return r.survived ? `> ${RECOVERY_WINDOW_MS / 1000} s` : "never";
}

/** `p50 / p95 ms`, with `ok/total` when some failed. */
export function latencyCell(t: Timings): string {
  if (t.total === 0) return "–";
  const n = t.ok === t.total ? `${t.total}` : `${t.ok}/${t.total} ok`;
  return `${ms(t.p50Ms)} / ${ms(t.p95Ms)} ms (${n})`;
}

/** The markdown table: one line per page and system. */
export function markdownTable(rows: HostileRow[]): string {
  const head = [
    "page",
    "system",
    "hostile call",
    "A answers a healthy page after",
    "B navigate p50 / p95, baseline",
    "B navigate p50 / p95, during the attack",
    "browsers' PSS peak (both sessions)",
    "hostile browser's group peak",
    "survived",
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => " --- ").join("|")}|`];
  for (const r of rows) {
    const name = r.system === "omotai" ? "Omotai" : `Playwright MCP ${PLAYWRIGHT_MCP_VERSION}`;
    if (r.error) {
      const rest = head.slice(3).map(() => "–");
      lines.push(`| ${[r.page, name, `failed: ${r.error.slice(0, 80)}`, ...rest].join(" | ")} |`);
      continue;
    }
    const hostile = `${secs(r.hostile.ms)}${r.hostile.isError ? " (error)" : ""}${
      r.dwellMs > 0 ? `, then ${r.dwellMs / 1000} s on the page` : ""
    }${r.windows ? `; ${windowsNote(r.windows)}` : ""}`;
    const dialogs = r.dialogsAnswered > 0 ? ` (${r.dialogsAnswered} dialogs answered)` : "";
    lines.push(
      `| ${
        [
          r.page,
          name,
          hostile,
          `${recoveryCell(r)}${dialogs}`,
          latencyCell(r.baseline),
          latencyCell(r.during),
          mib(r.browserPeakKiB * 1024),
          r.system === "omotai"
            ? `${mib(r.groupPeakBytes)}${r.groupLimitBytes ? ` of ${mib(r.groupLimitBytes)}` : ""}`
            : "– (one shared browser)",
          r.survived ? "yes" : "no",
        ].join(" | ")
      } |`,
    );
  }
  return lines.join("\n");
}

/** What ran of a page's windows, for the table. */
export function windowsNote(w: NonNullable<HostileRow["windows"]>): string {
  return `${w.popupsRan} popups ran, at most ${w.maxAlive} pages at once, ` +
    `${w.tabsListed ?? "?"} tabs listed after`;
}

/**
 * The tabs a `browser_tabs` list answer names: Omotai's `N tab(s)` line, or the peer's
 * `- i: …` lines; undefined when it says neither.
 */
export function tabsListed(text: string): number | undefined {
  const ours = text.match(/^(\d+) tab\(s\)/m);
  if (ours) return Number(ours[1]);
  const peer = text.match(/^- \d+: /gm)?.length ?? 0;
  return peer > 0 ? peer : undefined;
}

/**
 * Whether `text`, a failed call's answer, says a dialog is in the way and how to answer it
 * (`browser_handle_dialog`): the peer's modal state, or Omotai's notice.
 */
export function dialogInTheWay(text: string): boolean {
  return /does not handle the modal state/.test(text) ||
    (/browser_handle_dialog/.test(text) && /dialog/i.test(text));
}

/** Whether a navigate's answer is the healthy page (not an error of either system). */
export function answeredHealthy(r: { text: string; isError: boolean }): boolean {
  return !r.isError && !/^### Error/m.test(r.text) && HEALTHY.test(r.text);
}

// ---------------------------------------------------------------------------------------------
// The systems
// ---------------------------------------------------------------------------------------------

/** A system under test, freshly started for one page. */
interface System extends AsyncDisposable {
  name: SystemName;
  /** A new MCP session. */
  connect(): Promise<Session>;
  /** Whether its process runs. */
  alive(): boolean;
  /** The process whose Chromium descendants are its browsers. */
  root: number;
  /** Omotai: its browsers' memory groups' directories, by group name. */
  groups?(): Promise<Map<string, string>>;
}

interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

async function connectWith(transport: StreamableHTTPClientTransport): Promise<Session> {
  const client = new Client({ name: "omotai-hostile-bench", version: "0" });
  await client.connect(transport, { timeout: B_CALL_MS });
  return { client, transport };
}

/**
 * Omotai in this process, default isolation and limits, allowing the site's origins (and
 * WebSockets to them).
 */
async function startOmotai(origins: string[]): Promise<System> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-hostile-" });
  let runtime: Runtime;
  try {
    // The sockets the popup flood's pages hold are the site's census, not the attack: let
    // them through (under read_only every upgrade is otherwise refused).
    const list = origins.join(", ");
    runtime = await startTestRuntime(dir, `allowed_origins: [${list}]\nwebsockets: [${list}]\n`);
  } catch (err) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
  const rt = runtime;
  const place = rt.isolation.cgroup?.backend === "v1" || rt.isolation.cgroup?.backend === "v2"
    ? await locateCgroups()
    : undefined;
  // `<place>/omotai/<instance>`, the instance named as the profile store's is
  // (runtime/cli/browser_isolation.ts).
  const instanceGroup = async () => {
    if (!place || !("place" in place)) return undefined;
    for await (const e of Deno.readDir(join(dir, "profiles"))) {
      if (!e.isDirectory) continue;
      const top = place.place.backend === "v2" ? place.place.dir : place.place.dirs.memory;
      return join(top, CGROUP_DIR, e.name);
    }
    return undefined;
  };
  return {
    name: "omotai",
    root: Deno.pid,
    alive: () => true,
    connect: async () =>
      await connectWith(await agentTransport(rt, "http") as StreamableHTTPClientTransport),
    groups: async () => {
      const out = new Map<string, string>();
      try {
        const root = await instanceGroup();
        if (!root) return out;
        for await (const e of Deno.readDir(root)) {
          if (e.isDirectory) out.set(e.name, join(root, e.name));
        }
      } catch { /* not made yet, or gone */ }
      return out;
    },
    async [Symbol.asyncDispose]() {
      try {
        await rt[Symbol.asyncDispose]();
      } finally {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}

/** The peer as one HTTP server: both sessions' contexts in its one browser. */
async function startPeer(): Promise<System> {
  const peer = await startPeerHttp();
  return {
    name: "playwright-mcp",
    root: peer.pid,
    alive: () => alive(peer.pid),
    connect: () => connectWith(new StreamableHTTPClientTransport(peer.url)),
    [Symbol.asyncDispose]: () => peer[Symbol.asyncDispose](),
  };
}

// ---------------------------------------------------------------------------------------------
// One row
// ---------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim().slice(0, 120);
}

/** The browsers' memory, sampled until stopped: summed PSS and the groups' peaks. */
function sampleMemory(sys: System, skipGroup: string | undefined) {
  let stopped = false;
  let peakKiB = 0;
  const groupPeaks = new Map<string, number>();
  let limit: number | undefined;
  const v1 = { peak: "memory.max_usage_in_bytes", limit: "memory.limit_in_bytes" };
  const v2 = { peak: "memory.peak", limit: "memory.max" };
  const readNumber = async (file: string) => {
    const n = Number((await Deno.readTextFile(file)).trim());
    return Number.isFinite(n) ? n : undefined;
  };
  const once = async () => {
    peakKiB = Math.max(peakKiB, (await sampleTree(sys.root)).browserPssKiB);
    for (const [name, dir] of await sys.groups?.() ?? []) {
      if (name === skipGroup) continue;
      for (const f of [v2, v1]) {
        const peak = await readNumber(join(dir, f.peak)).catch(() => undefined);
        if (peak === undefined) continue;
        groupPeaks.set(name, Math.max(groupPeaks.get(name) ?? 0, peak));
        limit ??= await readNumber(join(dir, f.limit)).catch(() => undefined);
        break;
      }
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await once().catch(() => {});
      await sleep(SAMPLE_MS);
    }
    await once().catch(() => {});
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return {
        peakKiB,
        groupPeakBytes: groupPeaks.size ? Math.max(...groupPeaks.values()) : undefined,
        groupLimitBytes: limit,
      };
    },
  };
}

/** B navigating the healthy page in a loop until stopped (bounded in count). */
function bLoop(b: Session, url: string) {
  let stopped = false;
  const okMs: number[] = [];
  const allMs: number[] = [];
  const failures: string[] = [];
  const loop = (async () => {
    for (let k = 0; !stopped && k < B_MAX_NAVS; k++) {
      const r = await callTool(b.client, "browser_navigate", { url }, B_CALL_MS);
      allMs.push(r.ms);
      if (answeredHealthy(r)) okMs.push(r.ms);
      else {
        failures.push(`B: ${oneLine(r.text)}`);
        await sleep(250);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { during: timings(okMs, allMs.length), allP95: percentile(allMs, 95), failures };
    },
  };
}

/**
 * A, after the hostile call (whose answer was `shown`): the healthy page until it answers or
 * the window closes. A dialog the answer shows is answered first, and each one it brings, as
 * an agent would, with the system's own tool; so is one in the way of a navigation.
 */
async function recover(sys: System, a: Session, url: string, from: number, shown: string) {
  let calls = 0;
  let dialogs = 0;
  const failures: string[] = [];
  const answerDialogs = async (text: string) => {
    const before = dialogs;
    while (dialogInTheWay(text) && dialogs < DIALOG_ANSWERS) {
      if (performance.now() - from > RECOVERY_WINDOW_MS || !sys.alive()) break;
      const d = await callTool(a.client, "browser_handle_dialog", { accept: true }, B_CALL_MS);
      dialogs++;
      text = d.text;
    }
    // What the last answer said: the next dialog, or how the system ended the chain.
    if (dialogs > before && failures.length < 5) {
      failures.push(`A after ${dialogs} dialogs: ${oneLine(text)}`);
    }
  };
  await answerDialogs(shown);
  for (;;) {
    const left = RECOVERY_WINDOW_MS - (performance.now() - from);
    if (left <= 0 || !sys.alive()) break;
    calls++;
    const r = await callTool(a.client, "browser_navigate", { url }, Math.max(1_000, left));
    if (answeredHealthy(r)) {
      const at = performance.now() - from;
      if (at <= RECOVERY_WINDOW_MS) return { recoveredMs: at, calls, dialogs, failures };
      break;
    }
    if (failures.length < 5) failures.push(`A: ${oneLine(r.text)}`);
    await answerDialogs(r.text);
    if (r.ms < 1_000) await sleep(250);
  }
  return { recoveredMs: undefined, calls, dialogs, failures };
}

/** One page on one system, freshly started, on a fresh site. */
async function runRow(page: BenchPage, name: SystemName): Promise<HostileRow> {
  await using site = serveHostileSite();
  const loadStart = Deno.loadavg();
  const healthy = site.url("/healthy");
  const row: HostileRow = {
    page: page.path,
    system: name,
    hostile: { ms: NaN, isError: true, text: "" },
    dwellMs: page.dwellMs,
    recoveryCalls: 0,
    dialogsAnswered: 0,
    baseline: timings([], 0),
    during: timings([], 0),
    duringAllP95Ms: NaN,
    browserPeakKiB: 0,
    browserBeforeKiB: 0,
    survived: false,
    loadStart,
    loadEnd: loadStart,
    failures: [],
  };
  let sys: System | undefined;
  const sessions: Session[] = [];
  try {
    sys = name === "omotai" ? await startOmotai([site.origin, site.other]) : await startPeer();
    // B first: on Omotai its browser's group is the first one made, and not the hostile one's.
    const b = await sys.connect();
    sessions.push(b);
    const warmB = await callTool(b.client, "browser_navigate", { url: healthy }, B_CALL_MS);
    if (!answeredHealthy(warmB)) throw new Error(`B warm-up: ${oneLine(warmB.text)}`);
    const bGroup = [...(await sys.groups?.() ?? new Map()).keys()][0];
    const a = await sys.connect();
    sessions.push(a);
    const warmA = await callTool(a.client, "browser_navigate", { url: healthy }, B_CALL_MS);
    if (!answeredHealthy(warmA)) throw new Error(`A warm-up: ${oneLine(warmA.text)}`);

    const base: number[] = [];
    for (let k = 0; k < BASELINE_NAVS; k++) {
      const r = await callTool(b.client, "browser_navigate", { url: healthy }, B_CALL_MS);
      if (answeredHealthy(r)) base.push(r.ms);
      else row.failures.push(`B baseline: ${oneLine(r.text)}`);
    }
    row.baseline = timings(base, BASELINE_NAVS);
    row.browserBeforeKiB = (await sampleTree(sys.root)).browserPssKiB;

    const memory = sampleMemory(sys, bGroup);
    const other = bLoop(b, healthy);
    try {
      const hostile = await callTool(
        a.client,
        "browser_navigate",
        { url: site.url(page.path) },
        HOSTILE_CALL_MS,
      );
      // The page does its harm meanwhile; B goes on measuring it.
      if (page.dwellMs > 0) await sleep(page.dwellMs);
      const end = performance.now();
      row.hostile = {
        ms: hostile.ms,
        isError: hostile.isError || /^### Error/m.test(hostile.text),
        text: oneLine(hostile.text),
      };
      const back = await recover(sys, a, healthy, end, hostile.text);
      row.recoveredMs = back.recoveredMs;
      row.recoveryCalls = back.calls;
      row.dialogsAnswered = back.dialogs;
      row.failures.push(...back.failures);
      if (page.opensWindows) {
        // After A's way back: the popups the system let stay are still there.
        const tabs = await callTool(a.client, "browser_tabs", { action: "list" }, B_CALL_MS);
        const tabsCount = tabsListed(tabs.text);
        if (tabsCount === undefined) row.failures.push(`A's tabs: ${oneLine(tabs.text)}`);
        row.windows = {
          popupsRan: site.census.popupsServed,
          maxAlive: site.census.maxAlive,
          tabsListed: tabsCount,
        };
      }
    } finally {
      const bOut = await other.stop();
      row.during = bOut.during;
      row.duringAllP95Ms = bOut.allP95;
      row.failures.push(...bOut.failures.slice(0, 10));
      const mem = await memory.stop();
      row.browserPeakKiB = mem.peakKiB;
      row.groupPeakBytes = mem.groupPeakBytes;
      row.groupLimitBytes = mem.groupLimitBytes;
    }
    const after = await callTool(b.client, "browser_navigate", { url: healthy }, B_CALL_MS);
    row.survived = sys.alive() && answeredHealthy(after);
    if (!answeredHealthy(after)) row.failures.push(`B after: ${oneLine(after.text)}`);
  } catch (err) {
    row.error = (err instanceof Error ? err.message : String(err)).slice(0, 200);
    row.survived = sys?.alive() ?? false;
  } finally {
    for (const s of sessions) await endSession(s);
    try {
      await sys?.[Symbol.asyncDispose]();
    } catch (err) {
      row.failures.push(`dispose: ${oneLine(String(err))}`);
    }
    row.loadEnd = Deno.loadavg();
  }
  return row;
}

function describe(r: HostileRow): string {
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(" ");
  if (r.error) return `${r.system}: FAILED ${r.error}`;
  return `${r.system}: hostile call ${secs(r.hostile.ms)} (${r.hostile.isError ? "error" : "ok"}: ${
    r.hostile.text.slice(0, 80)
  }), A answered after ${recoveryCell(r)} in ${r.recoveryCalls} ` +
    `calls (${r.dialogsAnswered} dialogs)${
      r.windows ? `, ${windowsNote(r.windows)}` : ""
    }, B baseline ${latencyCell(r.baseline)}, during ` +
    `${latencyCell(r.during)} (every call p95 ${ms(r.duringAllP95Ms)} ms), browsers ${
      mib(r.browserBeforeKiB * 1024)
    } -> peak ${mib(r.browserPeakKiB * 1024)}, group peak ${mib(r.groupPeakBytes)}, ` +
    `survived ${r.survived}; load ${load(r.loadStart)} -> ${load(r.loadEnd)}`;
}

if (import.meta.main) {
  const args = parseArgs(Deno.args);
  const rows: HostileRow[] = [];
  const loadBefore = Deno.loadavg();
  const systems: SystemName[] = args.only ? [args.only] : ["omotai", "playwright-mcp"];
  for (const page of args.pages) {
    console.log(`${page.path} (${page.does})`);
    for (const name of systems) {
      const row = await runRow(page, name);
      console.log(`  ${describe(row)}`);
      for (const f of row.failures.slice(0, 8)) console.log(`    ${f}`);
      rows.push(row);
    }
  }
  const loadAfter = Deno.loadavg();
  console.log("");
  console.log(markdownTable(rows));
  console.log("");
  console.log(
    `${navigator.hardwareConcurrency} cores, ${
      Math.round(Deno.systemMemoryInfo().total / 2 ** 30)
    } GiB; load average before ${loadBefore.map((x) => x.toFixed(2)).join(" ")}, after ${
      loadAfter.map((x) => x.toFixed(2)).join(" ")
    }`,
  );
  if (args.json) {
    await Deno.writeTextFile(
      args.json,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          cores: navigator.hardwareConcurrency,
          loadBefore,
          loadAfter,
          playwrightMcp: PLAYWRIGHT_MCP_VERSION,
          rows,
        },
        (_k, v) => typeof v === "number" && !Number.isFinite(v) ? null : v,
        2,
      ) + "\n",
    );
    console.log(`wrote ${args.json}`);
  }
}
