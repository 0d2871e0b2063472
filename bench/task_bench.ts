/**
 * Multi-step task benchmark: ten scripted tasks on local pages (bench/task_site.ts), each run
 * by scripted agents of Omotai and of Playwright MCP in the same run: per server one that pages
 * through snapshots and one that uses browser_find and reading mode (for the peer a third: the
 * find agent with its Playwright selectors). Per task it reports the total characters each
 * agent reads (every tool result, and every snapshot file a peer agent opens), charges each
 * side its cheapest agent, and checks the issue's targets over its five kinds of task
 * (`ISSUE_TASKS`).
 *
 * Omotai runs in-process (tests/helpers/harness.ts `startTestRuntime`, sse mode, Streamable
 * HTTP client, one session per agent); each peer agent is a Playwright MCP process from
 * bench/.peer over stdio with the system Chromium, as in bench/peer.ts.
 *
 * Run: deno run -A bench/task_bench.ts [--write] [--from FILE]   (`--write` replaces the
 * "Multi-step tasks" section of docs/bench-results.md; OMOTAI_TASK_ROUNDS sets the rounds of
 * every task but 5, default 3; OMOTAI_TASK_ONLY=id,id runs only those tasks (not for the
 * published table); OMOTAI_TASK_DUMP=DIR writes every tool result of the first round there,
 * to read what each agent was sent; OMOTAI_TASK_SAVE=FILE keeps the figures after each task,
 * and `--from FILE` writes the report from them again without running anything)
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { agentTransport, startTestRuntime } from "../tests/helpers/harness.ts";
import { expandRefSpan } from "../runtime/snapshot/ref_span.ts";
import { geomean, median } from "./compare.ts";
import { ensurePeerInstalled, peerCommand, PLAYWRIGHT_MCP_VERSION } from "./peer.ts";
import {
  ARTICLE_LINK,
  articleParagraphs,
  DIALOG_ORDER,
  DOCS_TARGET,
  docsSidebar,
  FORM_FIELDS,
  type FormField,
  HUGE_LINKS,
  invoiceRows,
  NEWS_CORPUS_PAGE,
  NEWS_FOLLOW_UP_TEXT,
  NEWS_SENTENCES,
  newsArticle,
  REVIEWS_STEP,
  SEARCH_QUERIES,
  searchCatalog,
  serveTaskSite,
  SHOP_BRAND,
  SHOP_PAGE_SIZE,
  SHOP_QUERY,
  shopCatalog,
  shopPage,
  shopResults,
  submissionMismatches,
  TABLE_PAGES,
  type TaskSite,
  WIDGET_FAQ,
  WIDGET_QUESTION,
  WIDGET_SPEC,
  WIDGET_SPECS,
  widgetReviews,
} from "./task_site.ts";

// ---------------------------------------------------------------------------------------------
// Pure helpers (bench/task_bench_test.ts)

/** Whose snapshot text a string is. */
export type SnapshotFormat = "omotai" | "peer";

/**
 * How an agent gets at a page: `snapshot` pages through snapshots (the outline's pages, the
 * peer's whole snapshot); `find` uses browser_find to locate a named control and reading mode
 * to read, and reads a snapshot (the peer: the file its answer points to) only when a step
 * needs the page; `select` (the peer only) is `find` with Playwright selectors in place of
 * lookups: a role selector for a named control, an element's snapshot for a region.
 */
export type Style = "snapshot" | "find" | "select";

/** The agents each side runs. */
export const STYLES_OF: Readonly<Record<"omotai" | "peer", readonly Style[]>> = {
  omotai: ["snapshot", "find"],
  peer: ["snapshot", "find", "select"],
};

/** An element line of a snapshot: its ref, role and accessible name. */
export interface RefLine {
  ref: string;
  role: string;
  name: string;
}

// Omotai: `[e12] button "Sign in"`, a link with no role word (`[e3] "Home" -> /`, `[e3] "Home"`
// in an overview), optionally
// a list item (`- [e12] …`), or in a diff with its mark (`+ [e12] …`, `~ [e12] …`).
const OMOTAI_LINE = /^(?:[+~] )?\s*(?:- )?\[(e\d+)\](?: ([\w-]+))?(?: "((?:[^"\\]|\\.)*)")?( -> )?/;
// Playwright MCP: `- button "Sign in" [ref=e12]`, attributes such as `[level=1]` or
// `[checked]` may sit between name and ref; refs of later pages carry a frame prefix (f1e12);
// a line whose name holds ": " is a YAML single-quoted scalar (`- 'link "a: b" [ref=e3]':`).
const PEER_LINE =
  /^\s*- '?([\w-]+)(?: "((?:[^"\\]|\\.)*)")?(?: \[[^\]\n]*\])*? \[ref=((?:f\d+)?e\d+)\]/;

const unescapeName = (s: string) => s.replace(/\\(.)/g, "$1");

/** Every element line of `text` that carries a ref still valid after it. */
export function parseRefs(text: string, format: SnapshotFormat): RefLine[] {
  const isDiff = format === "omotai" && isOmotaiDiff(text);
  const out: RefLine[] = [];
  for (const line of text.split("\n")) {
    if (format === "omotai") {
      // In a diff a line opening with "- " was removed: its element is gone.
      if (isDiff && line.startsWith("- ")) continue;
      const m = line.match(OMOTAI_LINE);
      // No role word: a link, by its quoted name or its arrow.
      const role = m?.[2] ?? (m?.[3] !== undefined || m?.[4] ? "link" : undefined);
      if (m && role) out.push({ ref: m[1], role, name: unescapeName(m[3] ?? "") });
    } else {
      const m = line.match(PEER_LINE);
      if (m) out.push({ ref: m[3], role: m[1], name: unescapeName(m[2] ?? "") });
    }
  }
  return out;
}

/** The ref of the first element of `role` named exactly `name`; throws if there is none. */
export function findRef(text: string, format: SnapshotFormat, role: string, name: string): string {
  const hit = parseRefs(text, format).find((r) => r.role === role && r.name === name);
  if (!hit) {
    throw new Error(`${format}: no ${role} "${name}" in:\n${text.slice(0, 2_000)}`);
  }
  return hit.ref;
}

/**
 * What an agent knows of the page's elements after reading `text`, given what it knew
 * (`known`, ref → element): a whole snapshot replaces it, except the elements an Omotai fold
 * marker (`<<<9 lines as before: e1–e9>>>`) says are still there; an Omotai diff adds and
 * changes `+`/`~` lines and drops the refs of `-` lines and of `- <<<N lines gone: …>>>`.
 * A result without a page view changes nothing.
 */
export function updatePicture(
  known: ReadonlyMap<string, RefLine>,
  text: string,
  format: SnapshotFormat,
): Map<string, RefLine> {
  if (!hasPageView(text, format)) return new Map(known);
  const shown = new Map(parseRefs(text, format).map((r) => [r.ref, r]));
  if (format === "peer") return shown;
  if (isOmotaiDiff(text)) {
    const next = new Map(known);
    for (const [ref, line] of shown) next.set(ref, line);
    for (const line of text.split("\n")) {
      const gone = /^- <<<\d+ lines gone: (.+)>>>$/.exec(line)?.[1];
      if (gone) { for (const ref of expandRefSpan(gone)) next.delete(ref); }
      const one = /^- \s*(?:- )?\[(e\d+)\]/.exec(line)?.[1];
      if (one) next.delete(one);
    }
    return next;
  }
  const next = new Map<string, RefLine>();
  for (const line of text.split("\n")) {
    const kept = /^<<<\d+ lines as before: (.+)>>>$/.exec(line)?.[1];
    if (!kept) continue;
    for (const ref of expandRefSpan(kept)) {
      const r = known.get(ref);
      if (r) next.set(ref, r);
    }
  }
  for (const [ref, line] of shown) next.set(ref, line);
  return next;
}

/**
 * Whether an Omotai result is a diff: its status line, before the untrusted block, says so
 * (page text inside the block may say anything).
 */
export function isOmotaiDiff(text: string): boolean {
  return /changes since your last view/.test(text.split("<<<untrusted-page ")[0]);
}

/** Whether a tool result carries a view of the page (a snapshot, a diff or "no changes"). */
export function hasPageView(text: string, format: SnapshotFormat): boolean {
  return format === "omotai"
    ? /<<<untrusted-page nonce=|^no changes since your last view/m.test(text)
    // 0.0.83 writes an action's snapshot to a file and returns its link (`- [Snapshot](…)`);
    // only an inline yaml block is something the agent has read.
    : /### Snapshot\n```yaml\n/.test(text);
}

/** A JSON schema object as `tools/list` returns it (only what the bench reads). */
export interface JsonSchemaObject {
  properties?: Record<string, unknown>;
}

/**
 * The name a tool's schema gives its element argument: Playwright MCP 0.0.83 calls it
 * `target`, older releases and Omotai `ref`.
 */
export function refArgName(schema: JsonSchemaObject | undefined): string {
  const props = schema?.properties ?? {};
  if ("ref" in props) return "ref";
  if ("target" in props) return "target";
  throw new Error(`no ref or target argument in ${JSON.stringify(props)}`);
}

/** The snapshot role of a form field's control (the same in both formats). */
export function roleOf(field: FormField): "textbox" | "combobox" | "checkbox" | "radio" {
  switch (field.control) {
    case "select":
      return "combobox";
    case "checkbox":
    case "radio":
      return field.control;
    default:
      return "textbox";
  }
}

/**
 * `browser_fill_form` arguments for `fields`, refs looked up in `snapshot`; `refKey` is the
 * element argument's name in the server's schema. A radio is filled by checking the option
 * its label names.
 */
export function fillFormArgs(
  fields: readonly FormField[],
  snapshot: string,
  format: SnapshotFormat,
  refKey: string,
): { fields: Record<string, string>[] } {
  return {
    fields: fields.map((f) => ({
      name: f.label,
      type: roleOf(f),
      [refKey]: findRef(snapshot, format, roleOf(f), f.label),
      value: f.control === "radio" ? "true" : f.value,
    })),
  };
}

/**
 * `doc` with the `## {heading}` section (up to the next `## ` heading) replaced by `section`,
 * or `section` appended when there is none. Other sections stay byte for byte.
 */
export function replaceSection(doc: string, heading: string, section: string): string {
  const body = section.endsWith("\n") ? section : section + "\n";
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`## ${heading}`));
  if (start < 0) {
    const base = doc.endsWith("\n") || doc === "" ? doc : doc + "\n";
    return base + (base === "" ? "" : "\n") + body;
  }
  let end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  if (end < 0) end = lines.length;
  const before = lines.slice(0, start).join("\n");
  const after = lines.slice(end).join("\n");
  return (before ? before + "\n" : "") + body + (after ? "\n" + after : "");
}

/** `a / b` as a percentage with one decimal. */
export function percent(a: number, b: number): string {
  return `${(a / b * 100).toFixed(1)}%`;
}

/** The tasks of the issue's target, by id: the five it measured on sites it did not design. */
export const ISSUE_TASKS = ["form", "find", "shop", "article", "widgets"] as const;

/** Bounds on Omotai's share of the peer's characters over `ISSUE_TASKS`. */
export interface IssueBounds {
  /** What the bounds compare, for the report ("each side's cheaper agent"). */
  label: string;
  geomeanMax: number;
  /** The bound on any one task's share, when there is one. */
  taskMax?: number;
}

/** The issue's target on each side's cheapest path: geomean ≤ 1/4, no task above 1/2. */
export const CHEAPEST_BOUNDS: IssueBounds = {
  label: "each side charged its cheapest agent",
  geomeanMax: 1 / 4,
  taskMax: 1 / 2,
};

/** The issue's target for the snapshot-paging agents alone: geomean ≤ 1/6. */
export const SNAPSHOT_BOUNDS: IssueBounds = {
  label: "snapshot-paging agents against each other",
  geomeanMax: 1 / 6,
};

/** The issue's target over `ISSUE_TASKS`, from each task's Omotai / peer character ratio. */
export interface IssueVerdict {
  geomean: number;
  max: number;
  /** The task with the highest ratio. */
  maxId: string;
  geomeanMet: boolean;
  /** True when `bounds` has no task bound. */
  maxMet: boolean;
}

/**
 * The verdict of `bounds` from `ratios` (task id → Omotai / peer characters); undefined unless
 * every one of `ISSUE_TASKS` has a finite ratio (a task left out or failed measures nothing).
 */
export function issueVerdict(
  ratios: ReadonlyMap<string, number>,
  bounds: IssueBounds = CHEAPEST_BOUNDS,
): IssueVerdict | undefined {
  const xs = ISSUE_TASKS.map((id) => ratios.get(id));
  if (xs.some((x) => x === undefined || !Number.isFinite(x))) return undefined;
  const values = xs as number[];
  const max = Math.max(...values);
  const g = geomean(values);
  return {
    geomean: g,
    max,
    maxId: ISSUE_TASKS[values.indexOf(max)],
    geomeanMet: g <= bounds.geomeanMax,
    maxMet: bounds.taskMax === undefined || max <= bounds.taskMax,
  };
}

/**
 * The report's line on `bounds` from `ratios` (task id → Omotai / peer characters); `label`
 * names a task (its number in the table).
 */
export function issueTargetLine(
  ratios: ReadonlyMap<string, number>,
  label: (id: string) => string = (id) => id,
  bounds: IssueBounds = CHEAPEST_BOUNDS,
): string {
  const pct = (x: number) => percent(x, 1);
  const limit = `Omotai ≤ ${pct(bounds.geomeanMax)} of the peer's characters as a geomean${
    bounds.taskMax === undefined ? "" : `, no task above ${pct(bounds.taskMax)}`
  }`;
  const which = `Issue target, ${bounds.label}, over its ${ISSUE_TASKS.length} tasks (${
    ISSUE_TASKS.map((id) => `${label(id)} ${id}`).join(", ")
  }; ${limit})`;
  const v = issueVerdict(ratios, bounds);
  if (!v) return `${which}: not measured in this run (one of them did not run or failed).`;
  const mark = (met: boolean) => met ? "met" : "**missed**";
  const highest = `highest **${pct(v.max)}** on ${label(v.maxId)} ${v.maxId}`;
  return `${which}: geomean **${pct(v.geomean)}** (≤ ${pct(bounds.geomeanMax)}: ${
    mark(v.geomeanMet)
  }), ${highest}${
    bounds.taskMax === undefined ? "" : ` (≤ ${pct(bounds.taskMax)}: ${mark(v.maxMet)})`
  }; target ${v.geomeanMet && v.maxMet ? "**met**" : "**missed**"}.`;
}

/** What an agent looks for: an element of `role` whose name is `text`, or starts with it. */
export interface Wanted {
  role: string;
  text: string;
  /** False: the name starts with `text` (a shop facet's name ends with a count). */
  exact: boolean;
}

/** Whether `line` is the element `w` asks for. */
export function matches(line: RefLine, w: Wanted): boolean {
  return line.role === w.role && (w.exact ? line.name === w.text : line.name.startsWith(w.text));
}

/**
 * A Playwright role selector for `w`, which Playwright MCP 0.0.83 takes in place of a ref
 * ("or a unique element selector"): the exact, case-sensitive name (`"…"s`), or a regular
 * expression anchored at the name's start.
 */
export function peerSelector(w: Wanted): string {
  if (w.exact) return `role=${w.role}[name="${w.text.replace(/[\\"]/g, (c) => `\\${c}`)}"s]`;
  return `role=${w.role}[name=/^${w.text.replace(/[.*+?^${}()|[\]\\/]/g, (c) => `\\${c}`)}/]`;
}

/** A cheap look at part of the page a step may try before reading the page. */
export interface Peek {
  tool: string;
  args: Record<string, unknown>;
  /** It names its element by a Playwright selector: only the `select` agent tries it. */
  selector?: true;
}

/** Whether `schema` takes every argument of `peek` (Omotai's snapshot has no `target`). */
export function takes(schema: JsonSchemaObject | undefined, peek: Peek): boolean {
  const props = schema?.properties;
  return props !== undefined && Object.keys(peek.args).every((k) => k in props);
}

/**
 * The snapshot file a Playwright MCP 0.0.83 answer points to (`- [Snapshot](.playwright-mcp/
 * page-….yml)`), relative to its working directory; undefined when it points to none.
 */
export function snapshotFileOf(text: string): string | undefined {
  return /\]\((\.playwright-mcp\/[\w.-]+\.yml)\)/.exec(text)?.[1];
}

/** The page URL a Playwright MCP answer reports (`- Page URL: …`), if any. */
export function pageUrlOf(text: string): string | undefined {
  return /^- Page URL: (.+)$/m.exec(text)?.[1];
}

/**
 * `browser_find` arguments for `w` under the tool's schema: the exact `{role, name}` form where
 * the schema has it and the name is known whole, else the name (or its start) as text.
 */
export function findArgs(schema: JsonSchemaObject | undefined, w: Wanted): Record<string, string> {
  const props = schema?.properties ?? {};
  return w.exact && "role" in props && "name" in props
    ? { role: w.role, name: w.text }
    : { text: w.text };
}

/** Median characters of one agent's rounds, or undefined if any round failed. */
export interface AgentFigure {
  median: number;
  min: number;
}

/**
 * Which of a side's agents is charged: the one with fewest median characters among those
 * that completed the task in every round (undefined: none did). A tie goes to the one listed
 * first.
 */
export function chargedStyle(
  figures: ReadonlyArray<readonly [Style, AgentFigure | undefined]>,
): Style | undefined {
  let best: [Style, AgentFigure] | undefined;
  for (const [style, f] of figures) {
    if (f && (!best || f.median < best[1].median)) best = [style, f];
  }
  return best?.[0];
}

/** Text with every run of white space one space: a line break where a view wrapped is a space. */
export function flatText(text: string): string {
  return text.replace(/\s+/g, " ");
}

// ---------------------------------------------------------------------------------------------
// The agents: two per server

/** Generous enough for the peer's 60,000-link snapshot; a call over it is a timeout. */
const CALL_TIMEOUT_MS = 120_000;

/** A tool result that reported an error: the task stops, its figures mean nothing. */
class ToolFailed extends Error {}

/** Tools that read the page without acting on it: their answers do not move the agent on. */
const READ_TOOLS = new Set(["browser_snapshot", "browser_find"]);

/** A connected MCP session as one scripted agent drives it. */
interface Agent extends AsyncDisposable {
  name: "omotai" | "peer";
  style: Style;
  format: SnapshotFormat;
  /** Input schemas by tool name, from `tools/list`. */
  schemas: Map<string, JsonSchemaObject>;
  /** Calls a tool; the joined text of its result. Throws `ToolFailed` on an error result. */
  call(tool: string, args: Record<string, unknown>, timeoutMs?: number): Promise<string>;
  /**
   * The elements the agent knows are on its page now, from everything it has read in this
   * conversation (every call of every task and round: one client, one session).
   */
  picture: Map<string, RefLine>;
  /** The peer: the snapshot file its last action's answer points to, not read yet. */
  pendingFile?: string;
  /** The peer: the directory its snapshot files are written to (its working directory). */
  fileDir?: string;
  /** The peer: the page URL its last answer reported. */
  url?: string;
}

async function agentOf(
  name: Agent["name"],
  style: Style,
  client: Client,
  cleanup: () => Promise<void>,
  fileDir?: string,
): Promise<Agent> {
  const schemas = new Map<string, JsonSchemaObject>();
  for (const t of (await client.listTools()).tools) {
    schemas.set(t.name, t.inputSchema as JsonSchemaObject);
  }
  const agent: Agent = {
    name,
    style,
    format: name,
    schemas,
    picture: new Map(),
    fileDir,
    async call(tool, args, timeoutMs = CALL_TIMEOUT_MS) {
      const res = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: timeoutMs,
      });
      const text = ((res.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join(
        "\n",
      );
      if (name === "peer" && !READ_TOOLS.has(tool)) {
        // Another document: what the agent knew of the last one is no longer there. The same
        // page changed in place keeps its refs (Playwright MCP keeps them within a document).
        const url = pageUrlOf(text);
        // A navigate loads a new document even to the URL it is on (a task's next round).
        if (tool === "browser_navigate" || (url !== undefined && url !== agent.url)) {
          agent.picture = new Map();
        }
        if (url !== undefined) agent.url = url;
        agent.pendingFile = snapshotFileOf(text);
      }
      agent.picture = updatePicture(agent.picture, text, name);
      if (res.isError || text.startsWith("### Error")) {
        throw new ToolFailed(`${name} ${tool}: ${text.slice(0, 400)}`);
      }
      return text;
    },
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
      await cleanup();
    },
  };
  return agent;
}

/** One Omotai runtime for both of its agents: each is a session of its own. */
async function startOmotai(origin: string): Promise<
  { agents: Partial<Record<Style, Agent>> } & AsyncDisposable
> {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-task-bench-" });
  const runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${origin}]\nread_only: false\n`,
  );
  const open = async (style: "snapshot" | "find") => {
    const client = new Client({ name: `omotai-task-bench-${style}`, version: "0" });
    await client.connect(await agentTransport(runtime));
    return await agentOf("omotai", style, client, async () => {});
  };
  const agents = { snapshot: await open("snapshot"), find: await open("find") };
  return {
    agents,
    async [Symbol.asyncDispose]() {
      for (const a of Object.values(agents)) await a?.[Symbol.asyncDispose]();
      await runtime[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * One Playwright MCP process (its own Chromium) per agent. Started here rather than through
 * bench/peer.ts's client because the scripts need its `tools/list` schemas, a per-call timeout
 * (the SDK's default of 60 s would cut the 60,000-link page short) and its working directory
 * (where it writes the snapshot files its answers point to).
 */
async function startPeerAgent(style: Style): Promise<Agent> {
  const { command, args } = peerCommand(await ensurePeerInstalled());
  const cwd = await Deno.makeTempDir({ prefix: "task-bench-peer-" });
  const client = new Client({ name: `omotai-task-bench-${style}`, version: "0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore", cwd }));
  return await agentOf("peer", style, client, async () => {
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }, cwd);
}

// ---------------------------------------------------------------------------------------------
// Task scripts

/** One call of a task, as measured. */
interface CallRecord {
  tool: string;
  chars: number;
  ms: number;
  /** What the agent received (kept for OMOTAI_TASK_DUMP). */
  text: string;
}

/**
 * One agent's run of one task: every tool call goes through here and is counted, and so is
 * every snapshot file the peer's agent reads. Steps say what they need — an element to act
 * on (`target`), text to have read (`see`) — and the agent's style decides how it gets it.
 */
class Recorder {
  readonly calls: CallRecord[] = [];
  /** What the agent has read since its last action: that action's answer first. */
  private chunks: string[] = [];
  constructor(readonly agent: Agent) {}

  get format(): SnapshotFormat {
    return this.agent.format;
  }

  get style(): Style {
    return this.agent.style;
  }

  /** What the agent knows of its page (kept by the agent across tasks and rounds). */
  get picture(): ReadonlyMap<string, RefLine> {
    return this.agent.picture;
  }

  /** Everything read since the last action. */
  get seen(): string {
    return this.chunks.join("\n");
  }

  /** Calls a tool and records its result's size and time. */
  async call(tool: string, args: Record<string, unknown>, timeoutMs?: number): Promise<string> {
    const t0 = performance.now();
    let text = "";
    try {
      text = await this.agent.call(tool, args, timeoutMs);
      return text;
    } catch (err) {
      if (err instanceof ToolFailed) text = err.message;
      throw err;
    } finally {
      this.calls.push({ tool, chars: text.length, ms: performance.now() - t0, text });
      if (READ_TOOLS.has(tool)) this.chunks.push(text);
      else this.chunks = [text];
    }
  }

  /** The peer's agent reads the snapshot file its last action's answer points to. */
  private async readSnapshotFile(file: string): Promise<void> {
    this.agent.pendingFile = undefined;
    const t0 = performance.now();
    const text = await Deno.readTextFile(`${this.agent.fileDir}/${file}`);
    this.calls.push({ tool: "read_snapshot_file", chars: text.length, ms: 0, text });
    this.calls[this.calls.length - 1].ms = performance.now() - t0;
    this.agent.picture = new Map(parseRefs(text, "peer").map((r) => [r.ref, r]));
    this.chunks.push(text);
  }

  /**
   * Calls an action `tool`, asking for the answer the step after it needs (`next`): on a
   * server whose action takes `answer` (Omotai: a page card by default), `answer: "overview"`
   * when the agent will read the page the action leads to and the card would not carry it
   * (see {@link wantsOverview}); otherwise the server's default answer.
   */
  async act(tool: string, args: Record<string, unknown>, next: Next = "none"): Promise<string> {
    const props = this.agent.schemas.get(tool)?.properties ?? {};
    const overview = "answer" in props && wantsOverview(this.style, next);
    return await this.call(tool, overview ? { ...args, answer: "overview" } : args);
  }

  /** The element argument's name of `tool` on this side. */
  refKey(tool: string): string {
    return refArgName(this.agent.schemas.get(tool));
  }

  /** The ref of `w` in what the agent read since its last action, or knows is still there. */
  knownRef(w: Wanted): string | undefined {
    for (const chunk of [...this.chunks].reverse()) {
      const hit = parseRefs(chunk, this.format).find((r) => matches(r, w));
      if (hit) return hit.ref;
    }
    return [...this.picture.values()].find((r) => matches(r, w))?.ref;
  }

  /**
   * Reads until `done(seen)` holds: the last action's answer; then, for the find style, each
   * of the step's `peek`s the server takes (a region's snapshot, a find whose context lines
   * show what was revealed), the peer's snapshot file, Omotai's reading mode (for `prose`);
   * then snapshots (Omotai's outline page by page, the peer's whole). Throws when it never
   * holds. Returns what was read.
   */
  async see(done: (seen: string) => boolean, what: string, opts: SeeOptions = {}): Promise<string> {
    if (done(this.seen)) return this.seen;
    for await (const _ of this.readings(opts)) {
      if (done(this.seen)) return this.seen;
    }
    throw new Error(`${what} was not seen`);
  }

  private async *readings({ prose = false, peek = [] }: SeeOptions): AsyncGenerator<void> {
    if (this.style !== "snapshot") {
      const mine = peek.filter((p) =>
        (this.style === "select" || !p.selector) && takes(this.agent.schemas.get(p.tool), p)
      );
      for (const p of mine) {
        try {
          await this.call(p.tool, p.args);
        } catch (err) {
          // No such region (or two): the agent read the error and reads on another way.
          if (!(err instanceof ToolFailed)) throw err;
        }
        yield;
      }
    }
    if (this.agent.name === "peer") {
      const file = this.agent.pendingFile;
      if (this.style !== "snapshot" && file) {
        await this.readSnapshotFile(file);
        yield;
      }
      await this.call("browser_snapshot", {});
      yield;
      return;
    }
    if (this.style === "find" && prose && readsArticles(this)) {
      for (let page = 1;; page++) {
        const t = await this.call("browser_snapshot", { mode: "read", ...pageArg(page) });
        yield;
        if (!/more: \d+ more page/.test(t)) break;
      }
    }
    // The outline: the action's answer may be its first page already.
    const first = / page 1\/(\d+)/.exec(this.chunks[0] ?? "")?.[1];
    let pages = Number(first ?? 0);
    if (!first) {
      const t = await this.call("browser_snapshot", {});
      yield;
      pages = Number(/ page 1\/(\d+)/.exec(t)?.[1] ?? 1);
    }
    for (let page = 2; page <= pages; page++) {
      await this.call("browser_snapshot", { page });
      yield;
    }
  }

  /**
   * The element argument for `w` in `tool`: a ref the agent has read; else the peer's role
   * selector (`select`) or browser_find (`find`, or a selector that failed); else what
   * reading the page gives.
   */
  async target(tool: string, w: Wanted): Promise<Record<string, string>> {
    const key = this.refKey(tool);
    const known = this.knownRef(w);
    if (known) return { [key]: known };
    if (this.style === "select") return { [key]: peerSelector(w) };
    if (this.style === "find") {
      if (this.agent.schemas.has("browser_find")) {
        await this.call("browser_find", findArgs(this.agent.schemas.get("browser_find"), w));
        const found = this.knownRef(w);
        if (found) return { [key]: found };
      }
    }
    const what = `${w.role} "${w.text}"${w.exact ? "" : "…"}`;
    await this.see(() => this.knownRef(w) !== undefined, what);
    return { [key]: this.knownRef(w)! };
  }

  /**
   * Clicks `w`. A target that no longer resolves (a ref of an element the page replaced, a
   * selector that matches two) is looked up once more by reading the page, as an agent would.
   */
  async click(w: Wanted, next: Next = "none"): Promise<string> {
    const element = `${w.role} ${w.text}`;
    try {
      return await this.act("browser_click", {
        ...await this.target("browser_click", w),
        element,
      }, next);
    } catch (err) {
      if (!(err instanceof ToolFailed)) throw err;
      this.agent.picture = new Map();
      if (this.style !== "snapshot" && this.agent.schemas.has("browser_find")) {
        await this.call("browser_find", findArgs(this.agent.schemas.get("browser_find"), w));
      }
      await this.see(() => this.knownRef(w) !== undefined, `${w.role} "${w.text}"`);
      const ref = { [this.refKey("browser_click")]: this.knownRef(w)! };
      return await this.act("browser_click", { ...ref, element }, next);
    }
  }
}

/**
 * What the step after an action needs of the page the action leads to, which decides the
 * answer an agent asks for when the server lets it choose (Omotai's `answer`):
 * - `control`: a named control other than a link (a page card lists those while they fit);
 * - `link`: a named link (a card counts links, it does not list them);
 * - `page`: content of a new page (rows, results, fields, a first view): a card has none;
 * - `prose`: an article's text (the find agent reads it in reading mode);
 * - `change`: what the action changed in place, in short (a count, a status, a few lines: a
 *   card shows the diff first);
 * - `text`: text the action reveals in place, read whole (an answer, loaded reviews): a card
 *   cuts each line to 100 characters and the diff to what fits;
 * - `none`: nothing, or a short confirmation a card may well show.
 */
export type Next = "control" | "link" | "page" | "prose" | "change" | "text" | "none";

/**
 * Whether an agent of `style` asks an action for the overview rather than the card, given
 * what its next step needs: the snapshot agent whenever the card cannot carry it (a link, a
 * new page's content, an article: it has no other way in than the outline, and the overview
 * is the outline's first page, or the whole diff, without the card before it); the find agent
 * only for a new page's content or revealed text (a link or a control it looks up by name, an
 * article it reads in reading mode). Both rely on the card for a control, a short change in
 * place, or nothing.
 */
export function wantsOverview(style: Style, next: Next): boolean {
  if (next === "page" || next === "text") return true;
  return style === "snapshot" && (next === "link" || next === "prose");
}

/** How a step reads: `prose` (reading mode suits it), `peek` (cheap looks to try first). */
interface SeeOptions {
  prose?: boolean;
  peek?: Peek[];
}

/** A snapshot of the one element `selector` picks (the peer's `target`). */
const region = (selector: string): Peek => ({
  tool: "browser_snapshot",
  args: { target: selector },
  selector: true,
});

/** A step reading what its page's main element shows (Omotai's find agent: reading mode). */
const MAIN: SeeOptions = { prose: true, peek: [region("main")] };
/** A step reading an article: reading mode, or its article (else main) element. */
const ARTICLE: SeeOptions = { prose: true, peek: [region("article"), region("main")] };

const pageArg = (page: number) => page > 1 ? { page } : {};

/** The element named exactly `text`. */
const exact = (role: string, text: string): Wanted => ({ role, text, exact: true });

/** Whether the server's `tool` (`browser_snapshot`, `browser_navigate`) has a reading mode. */
function readsArticles(r: Recorder, tool = "browser_snapshot"): boolean {
  return Object.hasOwn(r.agent.schemas.get(tool)?.properties ?? {}, "mode");
}

/** Polls `check` for up to `ms`. */
async function eventually(check: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return check();
}

/** A task: a fixed script of steps that throws when the agent did not get the job done. */
interface Task {
  id: string;
  title: string;
  /** Run once whatever the rounds setting. */
  singleRound?: true;
  /** Only the snapshot agents run it (a first view: there is nothing to find). */
  snapshotOnly?: true;
  run(r: Recorder, site: TaskSite): Promise<string | void>;
}

async function formTask(r: Recorder, site: TaskSite): Promise<void> {
  const before = site.formPosts.length;
  await r.act("browser_navigate", { url: `${site.origin}/form` }, "page");
  // The agent knows the values, not the form: it reads the form to learn its fields.
  const fields = FORM_FIELDS.map((f) => exact(roleOf(f), f.label));
  const form = await r.see(
    () => fields.every((w) => r.knownRef(w) !== undefined),
    "every field of the form",
    { peek: [region("form")] },
  );
  const refOf = (role: string, name: string) => r.knownRef(exact(role, name));
  if (r.agent.schemas.has("browser_fill_form")) {
    const fieldKey = refArgName(
      (r.agent.schemas.get("browser_fill_form")?.properties?.fields as {
        items?: JsonSchemaObject;
      })?.items,
    );
    const args = fillFormArgs(FORM_FIELDS, form, r.format, fieldKey);
    // A field on an earlier outline page than the last read keeps the ref the agent knows.
    for (const [i, f] of args.fields.entries()) {
      f[fieldKey] = refOf(roleOf(FORM_FIELDS[i]), FORM_FIELDS[i].label) ?? f[fieldKey];
    }
    await r.call("browser_fill_form", args);
  } else {
    // A server without browser_fill_form: one call per field, as an agent would do.
    for (const f of FORM_FIELDS) {
      const ref = refOf(roleOf(f), f.label) ?? findRef(form, r.format, roleOf(f), f.label);
      const role = roleOf(f);
      if (role === "textbox") {
        await r.call("browser_type", { [r.refKey("browser_type")]: ref, text: f.value });
      } else if (role === "combobox") {
        await r.call("browser_select_option", {
          [r.refKey("browser_select_option")]: ref,
          values: [f.value],
        });
      } else if (f.value === "true" || role === "radio") {
        await r.call("browser_click", { [r.refKey("browser_click")]: ref });
      }
    }
  }
  await r.click(exact("button", "Submit application"));
  await r.see((s) => s.includes("Application received"), "the confirmation page", MAIN);
  if (!await eventually(() => site.formPosts.length > before)) {
    throw new Error("the site received no submission");
  }
  const wrong = submissionMismatches(site.formPosts[site.formPosts.length - 1]);
  if (wrong.length) throw new Error(`submitted values differ: ${wrong.join("; ")}`);
}

async function tableTask(r: Recorder, site: TaskSite): Promise<void> {
  await r.act("browser_navigate", { url: `${site.origin}/table?page=1` }, "page");
  let seen = await r.see((s) => s.includes(`Page 1 of ${TABLE_PAGES}`), "page 1", MAIN);
  for (let p = 2; p <= TABLE_PAGES; p++) {
    await r.click(exact("link", "Next page"), "page");
    seen += await r.see((s) => s.includes(`Page ${p} of ${TABLE_PAGES}`), `page ${p}`, MAIN);
  }
  const missing = invoiceRows().filter((row) => !seen.includes(row.id)).map((row) => row.id);
  if (missing.length) throw new Error(`rows never seen: ${missing.join(", ")}`);
}

async function searchTask(r: Recorder, site: TaskSite): Promise<void> {
  await r.act("browser_navigate", { url: `${site.origin}/search` }, "control");
  // The box keeps its ref: every query is typed into the same element of the same document.
  const box = exact("searchbox", "Search products");
  for (const q of SEARCH_QUERIES) {
    const args = { ...await r.target("browser_type", box), text: q, submit: true };
    // The results change in place: the card's diff shows them first.
    await r.act("browser_type", args, "change");
    // Each refinement follows from the results of the last: the agent reads them.
    const n = searchCatalog(q).length;
    await r.see(
      (s) => s.includes(`${n} results for ${q}`),
      `"${q}": the result count (${n})`,
      MAIN,
    );
  }
  // The agent's picture of the page (its last view plus what diffs said is still there)
  // must hold exactly the final results: every one of them, and no product of a wider query.
  const last = searchCatalog(SEARCH_QUERIES[SEARCH_QUERIES.length - 1]).map((p) => p.title);
  const links = [...r.picture.values()].filter((l) => l.role === "link").map((l) => l.name);
  const missing = last.filter((t) => !links.includes(t));
  if (missing.length) throw new Error(`final results not seen: ${missing}`);
  const titles = new Set(searchCatalog(SEARCH_QUERIES[0]).map((p) => p.title));
  const stale = links.filter((t) => titles.has(t) && !last.includes(t));
  if (stale.length) throw new Error(`results of earlier queries still in view: ${stale}`);
}

async function dialogTask(r: Recorder, site: TaskSite): Promise<void> {
  const before = site.deletes.length;
  await r.act("browser_navigate", { url: `${site.origin}/dialog` }, "control");
  await r.click(exact("button", `Delete order ${DIALOG_ORDER}`));
  await r.act("browser_handle_dialog", { accept: true }, "change");
  await r.see(
    (s) => s.includes(`Order ${DIALOG_ORDER} was deleted.`),
    "the page's answer to the accepted dialog",
    MAIN,
  );
  if (!await eventually(() => site.deletes.length > before)) {
    throw new Error("the site received no delete");
  }
  if (site.deletes[site.deletes.length - 1] !== DIALOG_ORDER) {
    throw new Error("wrong order deleted");
  }
}

async function hugeTask(r: Recorder, site: TaskSite): Promise<string> {
  // Time to the first view: one budget for navigate and, for a server whose navigate does not
  // return the snapshot, the snapshot call.
  const deadline = performance.now() + CALL_TIMEOUT_MS;
  // The first view is the point: an agent that may choose asks for the page, not a card.
  const args = { url: `${site.origin}/huge` };
  const wantsView = "answer" in (r.agent.schemas.get("browser_navigate")?.properties ?? {});
  const nav = await r.call(
    "browser_navigate",
    wantsView ? { ...args, answer: "overview" } : args,
    CALL_TIMEOUT_MS,
  );
  const view = hasPageView(nav, r.format) ? nav : await r.call(
    "browser_snapshot",
    {},
    Math.max(1, deadline - performance.now()),
  );
  if (!view.includes("Item 0")) throw new Error("the first link is not in the first view");
  if (r.format === "omotai") {
    const pages = view.match(/ page 1\/(\d+)/)?.[1];
    return `first of ${pages ?? "?"} pages`;
  }
  const links = parseRefs(view, "peer").filter((l) => l.role === "link").length;
  return `${links.toLocaleString("en-US")} links`;
}

async function findTask(r: Recorder, site: TaskSite): Promise<void> {
  // One link in a long sidebar, named by the task; then the answer on the page it leads to,
  // which sits below the same sidebar.
  await r.act("browser_navigate", { url: `${site.origin}/docs` }, "link");
  await r.click(exact("link", DOCS_TARGET), "prose");
  await r.see((s) => s.includes("signature header computed"), "the target page's text", {
    prose: true,
    peek: [region("article")],
  });
}

/**
 * A page opened to be read whole: the find agent of a server whose `browser_navigate` has a
 * reading mode asks for that (its links come with refs); any other opens it and reads.
 */
async function openToRead(
  r: Recorder,
  url: string,
  done: (seen: string) => boolean,
): Promise<{ seen: string; note: string }> {
  if (r.style !== "snapshot" && readsArticles(r, "browser_navigate")) {
    let pages = 1;
    let text = await r.call("browser_navigate", { url, mode: "read" });
    while (/more: \d+ more page/.test(text)) {
      text = await r.call("browser_snapshot", { mode: "read", page: ++pages });
    }
    let note = `${pages} reading page(s)`;
    if (/no readable article on this page/.test(r.seen)) note += ", no article found: the outline";
    // What reading mode left out is read from the outline.
    return { seen: await r.see(done, "the article"), note };
  }
  await r.act("browser_navigate", { url }, "prose");
  return { seen: await r.see(done, "the article", ARTICLE), note: "" };
}

async function readTask(r: Recorder, site: TaskSite): Promise<string> {
  // Read a long article whole, then follow the link in its middle.
  const words = articleParagraphs().map((_, i) => `vintage${i + 1}x`);
  const { note } = await openToRead(
    r,
    `${site.origin}/article`,
    (s) => words.every((w) => s.includes(w)),
  );
  await r.click(exact("link", ARTICLE_LINK), "prose");
  await r.see((s) => s.includes("A year later the terraces held"), "the follow-up page", ARTICLE);
  return note;
}

async function articleTask(r: Recorder, site: TaskSite): Promise<string> {
  // A real news page read whole, then the link in its text followed.
  const { note } = await openToRead(
    r,
    `${site.origin}/news/article`,
    (s) => NEWS_SENTENCES.every((t) => flatText(s).includes(t)),
  );
  await r.click(exact("link", newsArticle().linkText), "prose");
  await r.see((s) => flatText(s).includes(NEWS_FOLLOW_UP_TEXT), "the follow-up page", ARTICLE);
  return note;
}

/** What a shop results page says it lists: `Showing 11–16 of 16 results`. */
const showing = (from: number, to: number, of: number) => `Showing ${from}–${to} of ${of} results`;

async function shopTask(r: Recorder, site: TaskSite): Promise<void> {
  // Search, narrow by one brand in the sidebar, go to the second page of what is left: each
  // step a new page from the server, as a shop without client-side filtering works. The
  // agent knows the query and the brand; it reads what it needs to act, and the products of
  // the page it ends on.
  await r.act("browser_navigate", { url: `${site.origin}/shop` }, "control");
  const box = exact("searchbox", "Search products");
  await r.act("browser_type", {
    ...await r.target("browser_type", box),
    text: SHOP_QUERY,
    submit: true,
  }, "link");
  // The brand's link carries its count, as a shop's facets do: the agent knows its start.
  await r.click({ role: "link", text: `${SHOP_BRAND} (`, exact: false }, "link");
  await r.click(exact("link", "Next page"), "page");
  const filtered = { q: SHOP_QUERY, brand: SHOP_BRAND };
  const n = shopResults(filtered).length;
  const want = shopPage({ ...filtered, page: 2 }).map((p) => p.title);
  await r.see(
    // The products as links the agent can open: their refs, not only their titles (reading
    // mode may show a title without its link's line).
    (s) =>
      s.includes(showing(SHOP_PAGE_SIZE + 1, SHOP_PAGE_SIZE + want.length, n)) &&
      want.every((t) => s.includes(t) && r.knownRef(exact("link", t)) !== undefined),
    "page 2 of the filtered results",
    MAIN,
  );
  // What the agent holds of the page now must list exactly page 2's products: every one, and
  // none of page 1 or of the unfiltered search.
  const titles = new Set(shopCatalog().map((p) => p.title));
  const products = [...r.picture.values()]
    .filter((l) => l.role === "link" && titles.has(l.name)).map((l) => l.name);
  const absent = want.filter((t) => !products.includes(t));
  if (absent.length) throw new Error(`page 2 results not seen: ${absent.join(", ")}`);
  const stale = products.filter((t) => !want.includes(t));
  if (stale.length) throw new Error(`other results still in view: ${stale.join(", ")}`);
}

async function widgetsTask(r: Recorder, site: TaskSite): Promise<void> {
  // A product page that changes in place: a tab, an accordion, "load more" twice. Each answer
  // must be in what the agent read after the action that revealed it.
  await r.act("browser_navigate", { url: `${site.origin}/product/halo-floor-lamp` }, "control");
  await r.click(exact("tab", "Specifications"), "change");
  const spec = WIDGET_SPECS.find(([k]) => k === WIDGET_SPEC)?.[1] ?? "";
  await r.see((s) => s.includes(WIDGET_SPEC) && s.includes(spec), `${WIDGET_SPEC} (${spec})`, {
    peek: [region(peerSelector(exact("tabpanel", "Specifications")))],
  });
  await r.click(exact("button", WIDGET_QUESTION), "text");
  const answer = WIDGET_FAQ.find(([q]) => q === WIDGET_QUESTION)?.[1] ?? "";
  await r.see((s) => flatText(s).includes(answer), "the FAQ answer", {
    // The question's own line and the lines after it: what it revealed.
    peek: [{ tool: "browser_find", args: { text: WIDGET_QUESTION } }],
  });
  const more = exact("button", "Load more reviews");
  await r.click(more, "control");
  await r.click(more, "text");
  const reviews = widgetReviews();
  const third = reviews.slice(2 * REVIEWS_STEP, 3 * REVIEWS_STEP).map((rv) => rv.author);
  await r.see(
    (s) =>
      s.includes(`Showing ${3 * REVIEWS_STEP} of ${reviews.length} reviews`) &&
      third.every((a) => s.includes(a)),
    "the reviews of the second load",
    MAIN,
  );
}

const TASKS: Task[] = [
  {
    id: "form",
    title: `1. ${FORM_FIELDS.length}-field form filled and submitted`,
    run: formTask,
  },
  {
    id: "table",
    title: `2. ${invoiceRows().length}-row table read over ${TABLE_PAGES} pages`,
    run: tableTask,
  },
  {
    id: "search",
    title: `3. search refined ${SEARCH_QUERIES.length - 1} times`,
    run: searchTask,
  },
  { id: "dialog", title: "4. confirm() dialog accepted", run: dialogTask },
  {
    id: "huge",
    title: `5. ${HUGE_LINKS.toLocaleString("en-US")}-link page, first view`,
    // One round: the peer's answer for this page is megabytes, and its time is not noise-bound.
    singleRound: true,
    snapshotOnly: true,
    run: hugeTask,
  },
  {
    id: "find",
    title: `6. one link found in a ${docsSidebar().length}-link docs sidebar and followed`,
    run: findTask,
  },
  {
    id: "read",
    title:
      `7. a ${articleParagraphs().length}-paragraph text-only article read whole, its link followed (content-bound)`,
    run: readTask,
  },
  {
    id: "article",
    title: `8. a real news article (corpus ${NEWS_CORPUS_PAGE}) read whole, a link in it followed`,
    run: articleTask,
  },
  {
    id: "shop",
    title: `9. shop search, a brand filter, page 2 (${shopCatalog().length} products)`,
    run: shopTask,
  },
  {
    id: "widgets",
    title: "10. product page: a tab, an accordion item, 'load more' twice (in place)",
    run: widgetsTask,
  },
];

// ---------------------------------------------------------------------------------------------
// Running and reporting

/** One agent's run of one task. */
interface AgentRun {
  calls: CallRecord[];
  ms: number;
  error?: string;
  timedOut?: boolean;
  note?: string;
}

async function runAgent(task: Task, agent: Agent, site: TaskSite): Promise<AgentRun> {
  const r = new Recorder(agent);
  const t0 = performance.now();
  try {
    const note = await task.run(r, site);
    return { calls: r.calls, ms: performance.now() - t0, note: note ?? undefined };
  } catch (err) {
    const msg = (err as Error).message;
    // The SDK reports a call over its timeout as McpError -32001 "Request timed out".
    const timedOut = /timed out|-32001/i.test(msg);
    return { calls: r.calls, ms: performance.now() - t0, error: msg, timedOut };
  }
}

const totalChars = (run: AgentRun) => run.calls.reduce((s, c) => s + c.chars, 0);
const toolList = (run: AgentRun) =>
  run.calls.map((c) => c.tool.replace(/^browser_/, "")).join(", ");
const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");

type Side = "omotai" | "peer";
const SIDES: Side[] = ["omotai", "peer"];

/** Per task, every agent's rounds. */
interface TaskResult {
  task: Task;
  runs: Record<Side, Partial<Record<Style, AgentRun[]>>>;
}

/** An agent's figure over its rounds; undefined if it ran none or failed one. */
function figure(runs: AgentRun[] | undefined): AgentFigure | undefined {
  if (!runs?.length || runs.some((r) => r.error)) return undefined;
  const xs = runs.map(totalChars);
  return { median: median(xs), min: Math.min(...xs) };
}

function cell(runs: AgentRun[] | undefined): string {
  if (!runs?.length) return "—";
  const failed = runs.find((r) => r.error);
  if (failed) return failed.timedOut ? `timeout (> ${CALL_TIMEOUT_MS / 1000} s)` : "failed";
  const f = figure(runs)!;
  return f.min === f.median ? fmtInt(f.median) : `${fmtInt(f.median)} (min ${fmtInt(f.min)})`;
}

/** Omotai / peer per round for the given agents: median and min over the rounds. */
function roundRatios(o: AgentRun[], p: AgentRun[]): { median: number; min: number } {
  const n = Math.min(o.length, p.length);
  const xs = Array.from({ length: n }, (_, i) => totalChars(o[i]) / totalChars(p[i]));
  return { median: median(xs), min: Math.min(...xs) };
}

/** The cheapest of `styles` for one side of one task, and its ratio to the other side's. */
function chargedRatio(
  runs: TaskResult["runs"],
  omotaiStyles: readonly Style[],
  peerStyles: readonly Style[],
): { omotai?: Style; peer?: Style; ratio?: { median: number; min: number } } {
  const pick = (side: Side, styles: readonly Style[]) =>
    chargedStyle(styles.map((st) => [st, figure(runs[side][st])] as const));
  const omotai = pick("omotai", omotaiStyles);
  const peer = pick("peer", peerStyles);
  if (!omotai || !peer) return { omotai, peer };
  return { omotai, peer, ratio: roundRatios(runs.omotai[omotai]!, runs.peer[peer]!) };
}

function report(results: TaskResult[], rounds: number, load: string): string {
  const rows: string[] = [];
  const scripts: string[] = [];
  const charged = new Map<string, number>();
  const noSelectors = new Map<string, number>();
  const paging = new Map<string, number>();
  const label = (id: string) => TASKS.find((t) => t.id === id)?.title.split(".")[0] ?? "?";
  const pct = (r?: { median: number; min: number }) =>
    r ? `${percent(r.median, 1)} (min ${percent(r.min, 1)})` : "n/a";
  for (const { task, runs } of results) {
    const all = chargedRatio(runs, STYLES_OF.omotai, STYLES_OF.peer);
    const noSel = chargedRatio(runs, STYLES_OF.omotai, ["snapshot", "find"]);
    const snap = chargedRatio(runs, ["snapshot"], ["snapshot"]);
    if (all.ratio) charged.set(task.id, all.ratio.median);
    if (noSel.ratio) noSelectors.set(task.id, noSel.ratio.median);
    if (snap.ratio) paging.set(task.id, snap.ratio.median);
    rows.push(
      `| ${task.title} | ${cell(runs.peer.snapshot)} | ${cell(runs.peer.find)} | ${
        cell(runs.peer.select)
      } | ${cell(runs.omotai.snapshot)} | ${cell(runs.omotai.find)} | ${all.omotai ?? "none"} / ${
        all.peer ?? "none"
      } | **${pct(all.ratio)}** | ${pct(noSel.ratio)} | ${pct(snap.ratio)} |`,
    );
    const notes = (run: AgentRun | undefined) => {
      if (!run) return "not run";
      const parts = [`${toolList(run)} (${fmtInt(totalChars(run))} chars)`];
      if (run.note) parts.push(run.note);
      if (run.error) parts.push(`stopped: ${flatText(run.error).slice(0, 200)}`);
      return parts.join("; ");
    };
    const line = SIDES.flatMap((side) =>
      STYLES_OF[side].filter((st) => runs[side][st]?.length).map((st) =>
        `${side === "omotai" ? "Omotai" : "peer"} ${st}: ${notes(runs[side][st]?.[0])}`
      )
    ).join(". ");
    scripts.push(`- ${task.title}: ${line}.`);
  }
  const noSelBounds = {
    ...CHEAPEST_BOUNDS,
    label: "the peer denied its selectors (charged the cheaper of its snapshot and find agents)",
  };
  return [
    `## Multi-step tasks (Omotai vs Playwright MCP ${PLAYWRIGHT_MCP_VERSION})`,
    "",
    "Each task is a fixed script of steps on local pages (`bench/task_site.ts`, one site on " +
    "127.0.0.1 with ordinary header/footer chrome; task 8 is the Guardian article of the shared " +
    "corpus served whole), run by five scripted (not LLM) agents in one run " +
    `(\`deno run -A bench/task_bench.ts --write\`, ${rounds} rounds; task 5: one round, ` +
    `snapshot agents only; ${load}). Each agent is a session of its own (each peer agent its ` +
    "own process and Chromium):",
    "",
    "- **snapshot** pages through snapshots: Omotai's action answers (its ~600-character page " +
    'card, or `answer: "overview"` on an action after which it needs a link, a new page\'s ' +
    "content, an article or revealed text: the outline's first page or the whole diff), then " +
    "its outline page by page; the peer's `browser_snapshot` (the whole page) whenever a step " +
    "needs the page.",
    "- **find** uses what Omotai's page card says (headings, the controls other than links, " +
    "the diff and the controls near the action) and otherwise locates a control the task " +
    "names with `browser_find` (Omotai: its exact `{role, name}` form when the schema has one; " +
    "a facet whose name it knows only the start of by `{text}`, no context) and reads with what " +
    "the server has: Omotai's `answer: \"overview\"` on an action whose new page's content or " +
    "revealed text it reads, reading mode (`browser_navigate`/`browser_snapshot " +
    '{mode: "read"}`) for an article, then its outline; the peer\'s snapshot file its last ' +
    "answer points to (0.0.83 answers an action with about 300 characters and a file link), " +
    "read only when a step needs the page.",
    "- **find + selectors** (the peer only): the find agent with Playwright selectors, which " +
    "0.0.83's element argument takes in place of a ref: a control the task names is clicked by " +
    '`role=link[name="…"s]` with no lookup at all, and a region is read by ' +
    '`browser_snapshot {target: "main"}` (`article`, `form`, the tab\'s tabpanel) before the ' +
    "file. Omotai has no selectors.",
    "",
    "A step needs the page when the agent must learn something the task does not tell it: the " +
    "fields of the form, result counts, rows, the text of an article or of the page a link leads " +
    "to, revealed panels. A control the task names (a link, a tab, a button, the brand of a " +
    "facet) may be located without reading. Characters: every tool result the agent reads " +
    "(and every snapshot file a peer agent opens); request arguments are not counted. Each " +
    "side is **charged its cheapest agent** (median over rounds; an agent that failed its task " +
    "in any round is not eligible); ratios are per round, Omotai's charged agent over the " +
    "peer's, median (min) over the rounds. Every run is checked against the site: the values " +
    "the form server received, rows, results and review entries read, the delete request, the " +
    "article's sentences and the page its link leads to, exactly the products of the shop's " +
    "page 2.",
    "",
    "| task | peer snapshot | peer find | peer find + selectors | Omotai snapshot | Omotai find | charged (Omotai / peer) | Omotai / peer, charged | … peer without selectors | snapshot agents only |",
    "|---|---:|---:|---:|---:|---:|:---:|---:|---:|---:|",
    ...rows,
    "",
    issueTargetLine(charged, label, CHEAPEST_BOUNDS),
    "",
    issueTargetLine(noSelectors, label, noSelBounds),
    "",
    issueTargetLine(paging, label, SNAPSHOT_BOUNDS),
    "",
    "The first snapshot page on the corpus (the issue's ≤ 1/8 with ≥ 99 % of the controls " +
    "reachable) is not measured here: `bench/snapshot_bench.ts` measures it (the Observation " +
    "benchmark at the top of this file).",
    "",
    "Calls of each agent (first round):",
    "",
    ...scripts,
  ].join("\n");
}

async function dumpRun(dir: string, task: Task, who: string, run: AgentRun): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const [i, c] of run.calls.entries()) {
    await Deno.writeTextFile(`${dir}/${task.id}-${who}-${i + 1}-${c.tool}.txt`, c.text);
  }
}

/** The machine's load average over the last minute, for the report. */
async function loadAverage(): Promise<string> {
  const text = await Deno.readTextFile("/proc/loadavg").catch(() => "");
  const cores = navigator.hardwareConcurrency;
  const day = new Date().toISOString().slice(0, 10);
  return `${day}, ${cores} cores, load average ${text.split(" ")[0] || "?"} at the start`;
}

/** A run's results as `OMOTAI_TASK_SAVE` keeps them (without the texts) for `--from`. */
interface SavedRun {
  rounds: number;
  load: string;
  results: { id: string; runs: TaskResult["runs"] }[];
}

/** Writes the report, to stdout and with `--write` into docs/bench-results.md. */
async function publish(results: TaskResult[], rounds: number, load: string, write: boolean) {
  results.sort((a, b) => TASKS.indexOf(a.task) - TASKS.indexOf(b.task));
  const markdown = report(results, rounds, load);
  console.log(markdown);
  if (write) {
    const file = new URL("../docs/bench-results.md", import.meta.url);
    const doc = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, replaceSection(doc, "Multi-step tasks", markdown));
    console.error("bench: wrote the Multi-step tasks section of docs/bench-results.md");
  }
}

async function main() {
  const write = Deno.args.includes("--write");
  const from = Deno.args[Deno.args.indexOf("--from") + 1];
  if (Deno.args.includes("--from") && from) {
    // The report again from a saved run: its wording changes, its figures do not.
    const saved = JSON.parse(await Deno.readTextFile(from)) as SavedRun;
    const results = saved.results.map((r) => ({
      task: TASKS.find((t) => t.id === r.id)!,
      runs: r.runs,
    }));
    await publish(results, saved.rounds, saved.load, write);
    return;
  }
  const rounds = Number(Deno.env.get("OMOTAI_TASK_ROUNDS") ?? 3);
  const dump = Deno.env.get("OMOTAI_TASK_DUMP");
  const save = Deno.env.get("OMOTAI_TASK_SAVE");
  const load = await loadAverage();
  await using site = serveTaskSite();
  await using omotai = await startOmotai(site.origin);
  const peers: Agent[] = [];
  await using _peers = {
    async [Symbol.asyncDispose]() {
      for (const p of peers) await p[Symbol.asyncDispose]();
    },
  };
  for (const style of STYLES_OF.peer) peers.push(await startPeerAgent(style));
  const agents: Agent[] = [...STYLES_OF.omotai.map((st) => omotai.agents[st]!), ...peers];
  // Every browser starts on its first call: a warm-up page keeps that out of task 1.
  for (const a of agents) await a.call("browser_navigate", { url: `${site.origin}/` });

  const only = Deno.env.get("OMOTAI_TASK_ONLY")?.split(",");
  const results: TaskResult[] = [];
  // The 60,000-link page runs last: each session numbers its elements for the rest of the run
  // (Omotai never reuses a ref), and refs six digits long would lengthen every task after it.
  // The table keeps the tasks' order.
  const order = [...TASKS.filter((t) => t.id !== "huge"), ...TASKS.filter((t) => t.id === "huge")];
  for (const [i, task] of order.entries()) {
    if (only && !only.includes(task.id)) continue;
    const res: TaskResult = { task, runs: { omotai: {}, peer: {} } };
    const mine = agents.filter((a) => !task.snapshotOnly || a.style === "snapshot");
    for (let round = 0; round < (task.singleRound ? 1 : rounds); round++) {
      // Rotate who goes first so none profits from a warm cache or a quiet machine.
      const k = (i + round) % mine.length;
      for (const agent of [...mine.slice(k), ...mine.slice(0, k)]) {
        const run = await runAgent(task, agent, site);
        (res.runs[agent.name][agent.style] ??= []).push(run);
        const who = `${agent.name}-${agent.style}`;
        if (dump && round === 0) await dumpRun(dump, task, who, run);
        console.error(
          `task ${task.id} round ${round + 1} ${who}: ${fmtInt(totalChars(run))} chars, ${
            fmtInt(run.ms)
          } ms${run.error ? ` (${run.error.split("\n")[0].slice(0, 200)})` : ""}`,
        );
      }
    }
    results.push(res);
    if (save) {
      const strip = (runs: AgentRun[] = []) =>
        runs.map((r) => ({ ...r, calls: r.calls.map((c) => ({ ...c, text: "" })) }));
      const saved: SavedRun = {
        rounds,
        load,
        results: results.map((x) => ({
          id: x.task.id,
          runs: {
            omotai: Object.fromEntries(
              Object.entries(x.runs.omotai).map(([k, v]) => [k, strip(v)]),
            ),
            peer: Object.fromEntries(Object.entries(x.runs.peer).map(([k, v]) => [k, strip(v)])),
          },
        })),
      };
      await Deno.writeTextFile(save, JSON.stringify(saved));
    }
  }

  await publish(results, rounds, load, write);
}

if (import.meta.main) await main();
