/**
 * Multi-step task benchmark: ten scripted tasks on local pages (bench/task_site.ts), each run
 * through Omotai and through Playwright MCP in the same run. Per task it reports the total
 * characters the agent receives (the text of every tool result of every call of the task) and
 * the wall time, side by side, and the issue's target over its five kinds of task
 * (`ISSUE_TASKS`).
 *
 * Omotai runs in-process (tests/helpers/harness.ts `startTestRuntime`, sse mode, Streamable
 * HTTP client); the peer is Playwright MCP from bench/.peer over stdio with the system
 * Chromium, as in bench/peer.ts.
 *
 * Run: deno run -A bench/task_bench.ts [--write]   (`--write` replaces the "Multi-step tasks"
 * section of docs/bench-results.md; OMOTAI_TASK_ROUNDS sets the rounds of every task but 5,
 * default 3; OMOTAI_TASK_ONLY=id,id runs only those tasks (not for the published table);
 * OMOTAI_TASK_DUMP=DIR writes every tool result of the first round there, to read what each
 * side was sent)
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

/** The issue's bounds on Omotai's share of the peer's characters: geomean, and each task. */
export const ISSUE_GEOMEAN_MAX = 1 / 6;
/** The issue's bound on any one task's share. */
export const ISSUE_TASK_MAX = 1 / 4;

/** The issue's target over `ISSUE_TASKS`, from each task's Omotai / peer character ratio. */
export interface IssueVerdict {
  geomean: number;
  max: number;
  /** The task with the highest ratio. */
  maxId: string;
  geomeanMet: boolean;
  maxMet: boolean;
}

/**
 * The issue's verdict from `ratios` (task id → Omotai / peer characters); undefined unless
 * every one of `ISSUE_TASKS` has a finite ratio (a task left out or failed measures nothing).
 */
export function issueVerdict(ratios: ReadonlyMap<string, number>): IssueVerdict | undefined {
  const xs = ISSUE_TASKS.map((id) => ratios.get(id));
  if (xs.some((x) => x === undefined || !Number.isFinite(x))) return undefined;
  const values = xs as number[];
  const max = Math.max(...values);
  const g = geomean(values);
  return {
    geomean: g,
    max,
    maxId: ISSUE_TASKS[values.indexOf(max)],
    geomeanMet: g <= ISSUE_GEOMEAN_MAX,
    maxMet: max <= ISSUE_TASK_MAX,
  };
}

/**
 * The report's line on the issue's target from `ratios` (task id → Omotai / peer
 * characters); `label` names a task (its number in the table).
 */
export function issueTargetLine(
  ratios: ReadonlyMap<string, number>,
  label: (id: string) => string = (id) => id,
): string {
  const which = `Issue target over its ${ISSUE_TASKS.length} tasks (${
    ISSUE_TASKS.map((id) => `${label(id)} ${id}`).join(", ")
  }; Omotai ≤ 1/6 of the peer's characters as a geomean, no task above 1/4)`;
  const v = issueVerdict(ratios);
  if (!v) return `${which}: not measured in this run (one of them did not run or failed).`;
  const mark = (met: boolean) => met ? "met" : "**missed**";
  const pct = (x: number) => percent(x, 1);
  return `${which}: geomean **${pct(v.geomean)}** (≤ ${pct(ISSUE_GEOMEAN_MAX)}: ${
    mark(v.geomeanMet)
  }), highest **${pct(v.max)}** on ${label(v.maxId)} ${v.maxId} (≤ ${pct(ISSUE_TASK_MAX)}: ${
    mark(v.maxMet)
  }); target ${v.geomeanMet && v.maxMet ? "**met**" : "**missed**"}.`;
}

/** Text with every run of white space one space: a line break where a view wrapped is a space. */
export function flatText(text: string): string {
  return text.replace(/\s+/g, " ");
}

// ---------------------------------------------------------------------------------------------
// The two agents

/** Generous enough for the peer's 60,000-link snapshot; a call over it is a timeout. */
const CALL_TIMEOUT_MS = 120_000;

/** A tool result that reported an error: the task stops, its figures mean nothing. */
class ToolFailed extends Error {}

/** A connected MCP server as the task scripts drive it. */
interface Agent extends AsyncDisposable {
  name: "omotai" | "peer";
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
}

async function agentOf(
  name: Agent["name"],
  client: Client,
  cleanup: () => Promise<void>,
): Promise<Agent> {
  const schemas = new Map<string, JsonSchemaObject>();
  for (const t of (await client.listTools()).tools) {
    schemas.set(t.name, t.inputSchema as JsonSchemaObject);
  }
  const agent: Agent = {
    name,
    format: name,
    schemas,
    picture: new Map(),
    async call(tool, args, timeoutMs = CALL_TIMEOUT_MS) {
      const res = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: timeoutMs,
      });
      const text = ((res.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join(
        "\n",
      );
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

async function startOmotaiAgent(origin: string): Promise<Agent> {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-task-bench-" });
  const runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${origin}]\nread_only: false\n`,
  );
  const client = new Client({ name: "omotai-task-bench", version: "0" });
  await client.connect(await agentTransport(runtime));
  return await agentOf("omotai", client, async () => {
    await runtime[Symbol.asyncDispose]();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  });
}

/**
 * The peer is started here rather than through bench/peer.ts's client because the scripts
 * need its `tools/list` schemas and a per-call timeout (the SDK's default of 60 s would cut the
 * 60,000-link page short).
 */
async function startPeerAgent(): Promise<Agent> {
  const { command, args } = peerCommand(await ensurePeerInstalled());
  // Playwright MCP writes its snapshot files into its working directory.
  const cwd = await Deno.makeTempDir({ prefix: "task-bench-peer-" });
  const client = new Client({ name: "omotai-task-bench", version: "0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore", cwd }));
  return await agentOf("peer", client, async () => {
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  });
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

/** Counts every character and millisecond of one side's run of one task. */
class Recorder {
  readonly calls: CallRecord[] = [];
  constructor(readonly agent: Agent) {}

  /** What the agent knows of its page (kept by the agent across tasks and rounds). */
  get picture(): ReadonlyMap<string, RefLine> {
    return this.agent.picture;
  }

  get format(): SnapshotFormat {
    return this.agent.format;
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
    }
  }

  /**
   * What the agent knows of the page after an action whose result was `text`: the result
   * itself when it carries a view, else a `browser_snapshot`, which the agent would have to
   * call to see the page (and which therefore counts).
   */
  async view(text: string): Promise<string> {
    return hasPageView(text, this.format) ? text : await this.call("browser_snapshot", {});
  }

  /** Navigates and returns the agent's view of the new page. */
  async open(url: string): Promise<string> {
    return await this.view(await this.call("browser_navigate", { url }));
  }

  /** The element argument's name of `tool` on this side. */
  refKey(tool: string): string {
    return refArgName(this.agent.schemas.get(tool));
  }

  /**
   * The ref of the element of `role` named `name` the agent knows of: what it read last
   * first, then what it read before and was told is still there (a folded line).
   */
  ref(view: string, role: string, name: string): string {
    const known = [...this.picture.values()].find((r) => r.role === role && r.name === name);
    return parseRefs(view, this.format).find((r) => r.role === role && r.name === name)?.ref ??
      known?.ref ?? findRef(view, this.format, role, name);
  }

  /** Clicks the element of `role` named `name` the agent knows of. */
  async click(view: string, role: string, name: string): Promise<string> {
    return await this.call("browser_click", {
      [this.refKey("browser_click")]: this.ref(view, role, name),
      element: `${role} ${name}`,
    });
  }
}

/** Polls `check` for up to `ms`. */
async function eventually(check: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return check();
}

/** A task: a fixed script of tool calls that throws when the site did not get the job done. */
interface Task {
  id: string;
  title: string;
  /** Run once whatever the rounds setting. */
  singleRound?: true;
  run(r: Recorder, site: TaskSite): Promise<string | void>;
}

async function formTask(r: Recorder, site: TaskSite): Promise<void> {
  const before = site.formPosts.length;
  const page = await r.open(`${site.origin}/form`);
  if (r.agent.schemas.has("browser_fill_form")) {
    const fieldKey = refArgName(
      (r.agent.schemas.get("browser_fill_form")?.properties?.fields as {
        items?: JsonSchemaObject;
      })?.items,
    );
    await r.call("browser_fill_form", fillFormArgs(FORM_FIELDS, page, r.format, fieldKey));
  } else {
    // A server without browser_fill_form: one call per field, as an agent would do.
    for (const f of FORM_FIELDS) {
      const ref = findRef(page, r.format, roleOf(f), f.label);
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
  const done = await r.view(await r.click(page, "button", "Submit application"));
  if (!done.includes("Application received")) throw new Error("no confirmation page seen");
  if (!await eventually(() => site.formPosts.length > before)) {
    throw new Error("the site received no submission");
  }
  const wrong = submissionMismatches(site.formPosts[site.formPosts.length - 1]);
  if (wrong.length) throw new Error(`submitted values differ: ${wrong.join("; ")}`);
}

async function tableTask(r: Recorder, site: TaskSite): Promise<void> {
  let view = await r.open(`${site.origin}/table?page=1`);
  let seen = view;
  for (let p = 2; p <= TABLE_PAGES; p++) {
    view = await r.view(await r.click(view, "link", "Next page"));
    if (!view.includes(`Page ${p} of ${TABLE_PAGES}`)) throw new Error(`page ${p} not reached`);
    seen += view;
  }
  const missing = invoiceRows().filter((row) => !seen.includes(row.id)).map((row) => row.id);
  if (missing.length) throw new Error(`rows never seen: ${missing.join(", ")}`);
}

async function searchTask(r: Recorder, site: TaskSite): Promise<void> {
  const page = await r.open(`${site.origin}/search`);
  // The box keeps its ref: every query is typed into the same element of the same document.
  const box = findRef(page, r.format, "searchbox", "Search products");
  let view = page;
  for (const q of SEARCH_QUERIES) {
    view = await r.view(
      await r.call("browser_type", { [r.refKey("browser_type")]: box, text: q, submit: true }),
    );
    const n = searchCatalog(q).length;
    if (!view.includes(`${n} results for ${q}`)) {
      throw new Error(`"${q}": the result count (${n}) was not seen`);
    }
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
  const page = await r.open(`${site.origin}/dialog`);
  await r.click(page, "button", `Delete order ${DIALOG_ORDER}`);
  const view = await r.view(await r.call("browser_handle_dialog", { accept: true }));
  if (!view.includes(`Order ${DIALOG_ORDER} was deleted.`)) {
    throw new Error("the page's answer to the accepted dialog was not seen");
  }
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
  const nav = await r.call("browser_navigate", { url: `${site.origin}/huge` }, CALL_TIMEOUT_MS);
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
  // The agent is after one link in a long sidebar: it opens the page (the view a server's
  // navigate gives, no more) and asks for the link by name rather than reading every line.
  const nav = await r.call("browser_navigate", { url: `${site.origin}/docs` });
  const found = r.agent.schemas.has("browser_find")
    ? await r.call("browser_find", { text: "webhook signature" })
    : await r.view(nav);
  let view = await r.view(await r.click(found, "link", DOCS_TARGET));
  // The answer sits below the same long sidebar: a server that reads a page's main text is
  // asked for that; an outline cut into pages is read on, page by page, until it shows.
  if (!view.includes("signature header computed") && readsArticles(r)) {
    view = (await readWhole(r)).text;
  }
  const pages = Number(/ page 1\/(\d+)/.exec(view)?.[1] ?? 1);
  for (let page = 2; page <= pages && !view.includes("signature header computed"); page++) {
    view = await r.call("browser_snapshot", { page });
  }
  if (!view.includes("signature header computed")) throw new Error("the target page was not seen");
}

/** Whether the server's `tool` (`browser_snapshot`, `browser_navigate`) has a reading mode. */
function readsArticles(r: Recorder, tool = "browser_snapshot"): boolean {
  return Object.hasOwn(r.agent.schemas.get(tool)?.properties ?? {}, "mode");
}

/**
 * The whole article in reading mode, page after page: of the page the tab is on, or, given
 * `url`, of the page a reading navigate to it opens.
 */
async function readWhole(r: Recorder, url?: string): Promise<{ text: string; pages: number }> {
  let text = "";
  for (let page = 1;; page++) {
    const t = page === 1 && url !== undefined
      ? await r.call("browser_navigate", { url, mode: "read" })
      : await r.call("browser_snapshot", { mode: "read", ...(page > 1 ? { page } : {}) });
    text += t;
    if (!/more: \d+ more page/.test(t)) return { text, pages: page };
  }
}

/**
 * An article opened to be read whole: a server whose `browser_navigate` has a reading mode is
 * asked for that (its links come with refs, so no search), the other gives its page's view.
 */
async function openToRead(r: Recorder, url: string): Promise<{ seen: string; note: string }> {
  if (!readsArticles(r, "browser_navigate")) return { seen: await r.open(url), note: "" };
  const read = await readWhole(r, url);
  let note = `${read.pages} reading page(s)`;
  if (/no readable article on this page/.test(read.text)) {
    note += ", no article found: the outline";
  }
  return { seen: read.text, note };
}

async function readTask(r: Recorder, site: TaskSite): Promise<string> {
  // Read a long article whole, then follow the link in its middle.
  const { seen, note } = await openToRead(r, `${site.origin}/article`);
  const found = seen;
  const missing = articleParagraphs().map((_, i) => `vintage${i + 1}x`)
    .filter((w) => !seen.includes(w));
  if (missing.length) throw new Error(`paragraphs never read: ${missing.join(", ")}`);
  const view = await r.view(await r.click(found, "link", ARTICLE_LINK));
  if (!view.includes("A year later the terraces held")) {
    throw new Error("the follow-up page was not seen");
  }
  return note;
}

async function articleTask(r: Recorder, site: TaskSite): Promise<string> {
  // A real news page read whole, then the link in its text followed.
  const { seen, note } = await openToRead(r, `${site.origin}/news/article`);
  const missing = NEWS_SENTENCES.filter((t) => !flatText(seen).includes(t));
  if (missing.length) throw new Error(`article text never read: ${missing.join(" | ")}`);
  const view = await r.view(await r.click(seen, "link", newsArticle().linkText));
  if (!flatText(view).includes(NEWS_FOLLOW_UP_TEXT)) {
    throw new Error("the follow-up page was not seen");
  }
  return note;
}

/** What a shop results page says it lists: `Showing 11–16 of 16 results`. */
const showing = (from: number, to: number, of: number) => `Showing ${from}–${to} of ${of} results`;

async function shopTask(r: Recorder, site: TaskSite): Promise<void> {
  // Search, narrow by one brand in the sidebar, go to the second page of what is left: each
  // step a new page from the server, as a shop without client-side filtering works.
  const page = await r.open(`${site.origin}/shop`);
  const box = findRef(page, r.format, "searchbox", "Search products");
  let view = await r.view(
    await r.call("browser_type", {
      [r.refKey("browser_type")]: box,
      text: SHOP_QUERY,
      submit: true,
    }),
  );
  const hits = shopResults({ q: SHOP_QUERY }).length;
  if (!view.includes(showing(1, SHOP_PAGE_SIZE, hits))) {
    throw new Error(`"${SHOP_QUERY}": the result count (${hits}) was not seen`);
  }
  // The brand's link carries its count, as a shop's facets do.
  const filtered = { q: SHOP_QUERY, brand: SHOP_BRAND };
  const n = shopResults(filtered).length;
  view = await r.view(await r.click(view, "link", `${SHOP_BRAND} (${n})`));
  if (!view.includes(showing(1, SHOP_PAGE_SIZE, n))) {
    throw new Error(`${SHOP_BRAND}: the filtered count (${n}) was not seen`);
  }
  view = await r.view(await r.click(view, "link", "Next page"));
  const want = shopPage({ ...filtered, page: 2 }).map((p) => p.title);
  if (!view.includes(showing(SHOP_PAGE_SIZE + 1, SHOP_PAGE_SIZE + want.length, n))) {
    throw new Error("page 2 of the filtered results was not seen");
  }
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
  // must be in what the agent was sent after the action that revealed it.
  let view = await r.open(`${site.origin}/product/halo-floor-lamp`);
  view = await r.view(await r.click(view, "tab", "Specifications"));
  const spec = WIDGET_SPECS.find(([k]) => k === WIDGET_SPEC)?.[1] ?? "";
  if (!view.includes(WIDGET_SPEC) || !view.includes(spec)) {
    throw new Error(`${WIDGET_SPEC} (${spec}) was not seen`);
  }
  view = await r.view(await r.click(view, "button", WIDGET_QUESTION));
  const answer = WIDGET_FAQ.find(([q]) => q === WIDGET_QUESTION)?.[1] ?? "";
  if (!flatText(view).includes(answer)) throw new Error("the FAQ answer was not seen");
  let seen = "";
  for (let i = 0; i < 2; i++) {
    view = await r.view(await r.click(view, "button", "Load more reviews"));
    seen += view;
  }
  const reviews = widgetReviews();
  if (!seen.includes(`Showing ${3 * REVIEWS_STEP} of ${reviews.length} reviews`)) {
    throw new Error("the review count after two loads was not seen");
  }
  const missing = reviews.slice(2 * REVIEWS_STEP, 3 * REVIEWS_STEP)
    .filter((rv) => !seen.includes(rv.author)).map((rv) => rv.author);
  if (missing.length) throw new Error(`reviews never seen: ${missing.join(", ")}`);
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

/** One side's run of one task. */
interface SideRun {
  calls: CallRecord[];
  ms: number;
  error?: string;
  timedOut?: boolean;
  note?: string;
}

async function runSide(task: Task, agent: Agent, site: TaskSite): Promise<SideRun> {
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

const totalChars = (run: SideRun) => run.calls.reduce((s, c) => s + c.chars, 0);
const toolList = (run: SideRun) => run.calls.map((c) => c.tool.replace(/^browser_/, "")).join(", ");
const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");

/** Per task, both sides' rounds. */
interface TaskResult {
  task: Task;
  omotai: SideRun[];
  peer: SideRun[];
}

function cells(runs: SideRun[]): { chars: string; ms: string; ok: boolean; charsN: number } {
  const failed = runs.find((r) => r.error);
  if (failed) {
    const what = failed.timedOut ? `timeout (> ${CALL_TIMEOUT_MS / 1000} s)` : "failed";
    return { chars: what, ms: what, ok: false, charsN: NaN };
  }
  const charsN = median(runs.map(totalChars));
  return { chars: fmtInt(charsN), ms: fmtInt(median(runs.map((r) => r.ms))), ok: true, charsN };
}

function report(results: TaskResult[], rounds: number): string {
  const rows: string[] = [];
  const scripts: string[] = [];
  const ratios = new Map<string, number>();
  let met = 0;
  for (const { task, omotai, peer } of results) {
    const o = cells(omotai);
    const p = cells(peer);
    const ok = o.ok && p.ok;
    const ratio = ok ? percent(o.charsN, p.charsN) : "n/a";
    if (ok) ratios.set(task.id, o.charsN / p.charsN);
    const hit = ok && o.charsN <= p.charsN / 4;
    if (hit) met++;
    rows.push(
      `| ${task.title} | ${omotai[0].calls.length} / ${
        peer[0].calls.length
      } | ${o.chars} | ${p.chars} | ${ratio} | ${
        ok ? (hit ? "yes" : "**no**") : "n/a"
      } | ${o.ms} | ${p.ms} |`,
    );
    const notes = (runs: SideRun[]) => {
      const r = runs[0];
      const parts = [toolList(r)];
      if (r.note) parts.push(r.note);
      if (task.id === "huge") {
        parts.push(r.calls.map((c) => `${c.tool} ${fmtInt(c.ms)} ms`).join(" + "));
      }
      if (r.error) parts.push(`stopped: ${r.error.split("\n")[0].slice(0, 200)}`);
      return parts.join("; ");
    };
    scripts.push(`- ${task.title}: Omotai: ${notes(omotai)}. Peer: ${notes(peer)}.`);
  }
  const markdown = [
    `## Multi-step tasks (Omotai vs Playwright MCP ${PLAYWRIGHT_MCP_VERSION})`,
    "",
    "Each task is a fixed script of tool calls on local pages (`bench/task_site.ts`, one site on " +
    "127.0.0.1 with ordinary header/footer chrome), run through both servers in one run " +
    "(`deno run -A bench/task_bench.ts`). Characters: the sum of the text of every tool result " +
    "the agent receives during the task. Time: wall time of the whole script, median of " +
    `${rounds} rounds (task 5: one round). Each side's result is checked against the site ` +
    "(values the form server received, rows, results and review entries seen, the delete " +
    "request, sentences of the article and the page its link leads to).",
    "",
    "Task 7 is a synthetic article with almost no chrome: its text is most of what either side " +
    "sends, so it is bound by its content. Task 8 is a real page (the Guardian article of the " +
    "shared corpus, served whole from the task site with one link of its body sent to a local " +
    "follow-up page). Tasks 1, 6, 8, 9 and 10 are the five kinds of task of the issue's target " +
    "(a long form, a docs sidebar, a real article, a shop search with a filter and paging, a " +
    "page changed in place). A server whose `browser_navigate` has a reading mode opens task " +
    "8's article with it and follows the link by the ref its reading gives.",
    "",
    `Playwright MCP ${PLAYWRIGHT_MCP_VERSION} writes an action's snapshot to a file and returns ` +
    "only its link; where the script must see the page after an action (a ref to find, a result " +
    "to read) it calls `browser_snapshot`, which is what an agent has to do, and that call " +
    "counts. Omotai's actions return the snapshot (on a page already seen, only the diff).",
    "",
    "| task | calls (omotai / peer) | omotai chars | peer chars | omotai / peer | ≤ 1/4 | omotai ms | peer ms |",
    "|---|---:|---:|---:|---:|:---:|---:|---:|",
    ...rows,
    "",
    `Target (Omotai's characters ≤ 1/4 of the peer's on every task): **${
      met === results.length ? "met" : "missed"
    }**, met on ${met} of ${results.length} tasks.`,
    "",
    issueTargetLine(ratios, (id) => TASKS.find((t) => t.id === id)?.title.split(".")[0] ?? "?"),
    "",
    "Calls of each script (first round):",
    "",
    ...scripts,
  ].join("\n");
  return markdown;
}

async function dumpRun(dir: string, task: Task, side: string, run: SideRun): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const [i, c] of run.calls.entries()) {
    await Deno.writeTextFile(`${dir}/${task.id}-${side}-${i + 1}-${c.tool}.txt`, c.text);
  }
}

async function main() {
  const write = Deno.args.includes("--write");
  const rounds = Number(Deno.env.get("OMOTAI_TASK_ROUNDS") ?? 3);
  const dump = Deno.env.get("OMOTAI_TASK_DUMP");
  await using site = serveTaskSite();
  await using omotai = await startOmotaiAgent(site.origin);
  await using peer = await startPeerAgent();
  // Both browsers start on their first call: a warm-up page keeps that out of task 1.
  for (const a of [omotai, peer]) await a.call("browser_navigate", { url: `${site.origin}/` });

  const only = Deno.env.get("OMOTAI_TASK_ONLY")?.split(",");
  const results: TaskResult[] = [];
  // The 60,000-link page runs last: each side's session numbers its elements for the rest of
  // the run (Omotai never reuses a ref), and refs six digits long would lengthen every task
  // after it. The table keeps the tasks' order.
  const order = [...TASKS.filter((t) => t.id !== "huge"), ...TASKS.filter((t) => t.id === "huge")];
  for (const [i, task] of order.entries()) {
    if (only && !only.includes(task.id)) continue;
    const res: TaskResult = { task, omotai: [], peer: [] };
    for (let round = 0; round < (task.singleRound ? 1 : rounds); round++) {
      // Alternate who goes first so neither profits from a warm cache or a quiet machine.
      const order = (i + round) % 2 ? [omotai, peer] : [peer, omotai];
      for (const agent of order) {
        const run = await runSide(task, agent, site);
        res[agent.name].push(run);
        if (dump && round === 0) await dumpRun(dump, task, agent.name, run);
        console.error(
          `task ${task.id} round ${round + 1} ${agent.name}: ${fmtInt(totalChars(run))} chars, ${
            fmtInt(run.ms)
          } ms${run.error ? ` (${run.error.split("\n")[0].slice(0, 160)})` : ""}`,
        );
      }
    }
    results.push(res);
  }

  results.sort((a, b) => TASKS.indexOf(a.task) - TASKS.indexOf(b.task));
  const markdown = report(results, rounds);
  console.log(markdown);
  if (write) {
    const file = new URL("../docs/bench-results.md", import.meta.url);
    const doc = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, replaceSection(doc, "Multi-step tasks", markdown));
    console.error("bench: wrote the Multi-step tasks section of docs/bench-results.md");
  }
}

if (import.meta.main) await main();
