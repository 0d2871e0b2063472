/**
 * browser_console_messages and browser_network_requests: what the current tab logged and
 * requested, as Playwright MCP 0.0.83 names and shapes them. Both only read what the
 * session's watchers collected; page text stays inside untrusted blocks, URLs are origin
 * and path, and nothing is written to a file.
 *
 * @module
 */
import { z } from "zod";
import { PAGE_LOG_LEVELS } from "../browser/mod.ts";
import { InvalidArgumentsError } from "../mod.ts";
import { pageFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

/** How long a `filter` regexp may run over the listed URLs before the call is refused. */
export const FILTER_TIMEOUT_MS = 500;

const FILENAME_NOTE = "filename is not supported: the runtime writes no files; shown here instead";

const filename = z.string().max(1_000).optional()
  .describe("Not supported (the runtime writes no files): the result is returned as text");

export const consoleMessagesTool = defineTool({
  name: "browser_console_messages",
  title: "Get console messages",
  description:
    "Console messages of the current tab since its last navigation (or all kept ones): " +
    "console calls, uncaught errors and browser warnings, newest last. Page-written text, " +
    "shown inside an untrusted block; URLs lose their query.",
  schema: z.strictObject({
    level: z.enum(PAGE_LOG_LEVELS).default("info")
      .describe(
        'Level of the console messages to return. Each level includes the messages of more severe levels. Defaults to "info".',
      ),
    all: z.boolean().optional()
      .describe(
        "Return all console messages since the beginning of the session, not just since the last navigation. Defaults to false.",
      ),
    filename,
  }),
  kind: "snapshot",
  readOnly: true,
  destructive: false,
  facts: (ctx) => pageFacts(ctx, "snapshot"),
  async handle(ctx, { level, all, filename }) {
    const tab = await ctx.session.currentTab();
    if (filename !== undefined) ctx.response.notice(FILENAME_NOTE);
    ctx.response.result(
      ctx.session.pageLog.render(tab.info.targetId, { level, all }, ctx.session.nonce),
    );
  },
});

export const networkRequestsTool = defineTool({
  name: "browser_network_requests",
  title: "List network requests",
  description:
    "Requests of the current tab since its page loaded: method, origin and path (never the " +
    "query), status, and for requests the runtime refused the reason code. Successful " +
    "static resources are counted, not listed, unless `static` is true.",
  schema: z.strictObject({
    static: z.boolean().default(false)
      .describe(
        "Whether to include successful static resources like images, fonts, scripts, etc. Defaults to false.",
      ),
    filter: z.string().max(500).optional()
      .refine((v) => v === undefined || isRegExp(v), { message: "Invalid regular expression" })
      .describe(
        'Only return requests whose origin and path match this regexp (e.g. "/api/.*user"); queries are never matched.',
      ),
    filename,
  }),
  kind: "snapshot",
  readOnly: true,
  destructive: false,
  facts: (ctx) => pageFacts(ctx, "snapshot"),
  async handle(ctx, args) {
    const tab = await ctx.session.currentTab();
    const log = ctx.session.network;
    const tabId = tab.info.targetId;
    let match: ((url: string) => boolean) | undefined;
    if (args.filter !== undefined) {
      const urls = [...new Set(log.list(tabId).entries.map((e) => e.url))];
      const hits = await matchUrls(args.filter, urls);
      match = (url) => hits.has(url);
    }
    if (args.filename !== undefined) ctx.response.notice(FILENAME_NOTE);
    ctx.response.result(log.render(tabId, { static: args.static, match }, ctx.session.nonce));
  },
});

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/**
 * The matcher, run in a worker so that a pathological pattern cannot stall the runtime. It
 * says when it starts matching: the time limit is the regexp's, not the worker's start-up
 * (which a loaded machine stretches past the limit on its own).
 */
const MATCHER = `self.onmessage = (e) => {
  self.postMessage({ started: true });
  let hits = [];
  try {
    const re = new RegExp(e.data.pattern);
    hits = e.data.urls.filter((u) => re.test(u));
  } catch {}
  self.postMessage({ hits });
};`;

/** How long a matcher worker may take to start before the filter is refused. */
const WORKER_START_MS = 30_000;

let matcherUrl: string | undefined;

/**
 * The URLs `pattern` matches. The model's regexp runs in a worker that is terminated
 * `FILTER_TIMEOUT_MS` after it starts matching: backtracking on `(a+)+$` would otherwise
 * freeze every session.
 */
export async function matchUrls(pattern: string, urls: string[]): Promise<Set<string>> {
  if (urls.length === 0) return new Set();
  matcherUrl ??= URL.createObjectURL(new Blob([MATCHER], { type: "text/javascript" }));
  const worker = new Worker(matcherUrl, { type: "module" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<Set<string>>((resolve, reject) => {
      const refuse = (why: string) => () => reject(new InvalidArgumentsError(`filter: ${why}`));
      timer = setTimeout(refuse("the matcher did not start"), WORKER_START_MS);
      worker.onmessage = (e: MessageEvent<{ started?: boolean; hits?: string[] }>) => {
        if (e.data.started) {
          clearTimeout(timer);
          timer = setTimeout(
            refuse(`the regexp took longer than ${FILTER_TIMEOUT_MS} ms; use a simpler one`),
            FILTER_TIMEOUT_MS,
          );
        } else resolve(new Set(e.data.hits ?? []));
      };
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new InvalidArgumentsError("filter: the regexp could not run"));
      };
      worker.postMessage({ pattern, urls });
    });
  } finally {
    clearTimeout(timer);
    worker.terminate();
  }
}
