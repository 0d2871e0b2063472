/**
 * The page log of a session's tabs: the pages' `console.*` calls, uncaught exceptions and the
 * browser's own log entries of every page, frame and dedicated worker, kept per tab in a
 * bounded ring and shown by `browser_console_messages` (the Playwright MCP name the model
 * knows; "console" in our own names is the operator console, docs/glossary.md). Everything here is page text: it is
 * reduced when it arrives (URLs lose their query and fragment, every message is cut short)
 * and shown only inside an untrusted block. Values are rendered from what CDP reports
 * (`value`, `preview`, `description`); nothing ever calls back into the page to stringify.
 * A message is redacted whole before anything shortens or rewrites it (`redactCut()`), so
 * a password padded to sit across the cut is not left in pieces. Values and text are turned
 * into one line in `page_log_text.ts`.
 *
 * @module
 */
import type { Protocol, TrackedTarget } from "../../cdp/mod.ts";
import { displayUrl } from "../net/mod.ts";
import { processRedactor, redactCut, type Redactor } from "../redact/mod.ts";
import { untrustedBlock } from "../snapshot/mod.ts";
import type { TargetWatcher } from "./hooks.ts";
import { formatArgs, oneLine, renderValue, scrubUrls, sizeOf } from "./page_log_text.ts";
import { TabLogs } from "./tab_logs.ts";
import { tabTargetOf } from "./tab_of.ts";

/** Playwright's console levels, most severe first; each level includes those before it. */
export const PAGE_LOG_LEVELS = ["error", "warning", "info", "debug"] as const;
/** A page log level a call may ask for (Playwright's console levels). */
export type PageLogLevel = typeof PAGE_LOG_LEVELS[number];

/** The page log level of a `Log.entryAdded` level; anything else reads as `info`. */
const LOG_ENTRY_LEVELS: ReadonlyMap<string, PageLogLevel> = new Map([
  ["verbose", "debug"],
  ["info", "info"],
  ["warning", "warning"],
  ["error", "error"],
]);

/** The bounds of the log; every one caps memory or output a page could otherwise grow. */
export interface PageLogLimits {
  /** Messages kept per tab (the oldest go first). */
  perTab: number;
  /** Tabs with a log; the least recently written one goes first. */
  tabs: number;
  /** Characters of one message's text. */
  text: number;
  /** Stack frames kept per message. */
  frames: number;
  /** Characters of a shown URL (origin and path). */
  url: number;
  /** Characters of one rendered answer. */
  output: number;
  /** Events one target may send within `floodWindowMs` before recording stops on it. */
  floodEvents: number;
  /**
   * Characters of logged values one target may send within `floodWindowMs`: CDP carries a
   * logged string whole (10 MB and more), so a few huge ones cost as much as a loop.
   */
  floodChars: number;
  floodWindowMs: number;
}

/** The defaults: 200 messages per tab of at most 500 characters, answers of about 20 KB. */
export const PAGE_LOG_LIMITS: Readonly<PageLogLimits> = {
  perTab: 200,
  tabs: 16,
  text: 500,
  frames: 3,
  url: 200,
  output: 20_000,
  floodEvents: 1_000,
  floodChars: 20_000_000,
  floodWindowMs: 5_000,
};

/** `console.*` calls per target between two releases of the objects CDP keeps for them. */
const RELEASE_EVERY = 100;
/** Isolated-world contexts remembered per target (the runtime makes a few per frame). */
const MAX_CONTEXTS = 256;
/** Arguments of one `console.*` call rendered at most. */
const MAX_ARGS = 20;

/** One message as kept: already reduced, one line of text plus a few stack frames. */
export interface PageLogEntry {
  /** The console API type (`log`, `warning`, `table`, …), `exception`, or a log level. */
  type: string;
  level: PageLogLevel;
  text: string;
  /** `origin/path:line` of the call, if known. */
  location?: string;
  /** `function (origin/path:line:col)` for the innermost frames. */
  stack: string[];
  /** Which document of the tab logged it (counts main-frame navigations). */
  navigation: number;
}

/** What a call asks for. */
export interface PageLogQuery {
  /** Messages of this level and more severe ones; default `info`. */
  level?: PageLogLevel;
  /** Every kept message of the tab, not only those since its last navigation. */
  all?: boolean;
}

/** Messages of one tab, with the counts a header shows. */
export interface PageLogView {
  messages: PageLogEntry[];
  /** Messages in scope before the level filter, and how many were errors and warnings. */
  total: number;
  errors: number;
  warnings: number;
  /** Messages of the tab the ring had to forget. */
  dropped: number;
  /** Targets of the tab whose recording stopped because they logged too fast. */
  muted: number;
}

interface TabLog {
  messages: PageLogEntry[];
  navigation: number;
  dropped: number;
  muted: number;
}

/** Collects the page log per tab; a `TargetWatcher` of the session. */
export class PageLog implements TargetWatcher {
  readonly #limits: PageLogLimits;
  readonly #now: () => number;
  readonly #redactor: Redactor;
  readonly #tabs: TabLogs<TabLog>;

  /** `redactor` (the process's by default) redacts every message before it is cut. */
  constructor(
    limits: Partial<PageLogLimits> = {},
    now: () => number = Date.now,
    redactor: Redactor = processRedactor(),
  ) {
    this.#limits = { ...PAGE_LOG_LIMITS, ...limits };
    this.#tabs = new TabLogs<TabLog>({
      max: this.#limits.tabs,
      create: () => ({ messages: [], navigation: 0, dropped: 0, muted: 0 }),
    });
    this.#now = now;
    this.#redactor = redactor;
  }

  /**
   * Enables `Runtime` (and `Log` on frames) on pages, frames and dedicated workers of a tab.
   * The commands are sent before the tracker resumes the target, so nothing it logs is
   * missed, but never awaited: a target whose log cannot be followed still runs
   * (observing is not guarding).
   */
  watch(target: TrackedTarget): void {
    const tabId = tabTargetOf(target);
    if (tabId === undefined) return;
    const { session, info: { type } } = target;
    const isolated = new Set<number>();
    const recent: { at: number; chars: number }[] = [];
    let recentChars = 0;
    let calls = 0;
    let muted = false;
    // The runtime's own isolated worlds are not the page's log.
    const fromPage = (contextId: number | undefined) =>
      contextId === undefined || !isolated.has(contextId);
    const admit = (chars: number): boolean => {
      if (muted) return false;
      const now = this.#now();
      while (recent.length > 0 && now - recent[0].at > this.#limits.floodWindowMs) {
        recentChars -= recent.shift()!.chars;
      }
      recent.push({ at: now, chars });
      recentChars += chars;
      const { floodEvents, floodChars } = this.#limits;
      if (recent.length <= floodEvents && recentChars <= floodChars) return true;
      // A page logging in a loop would keep the runtime parsing its events: stop listening.
      muted = true;
      this.#tabs.write(tabId).muted++;
      session.send("Runtime.disable").catch(() => {});
      if (type !== "worker") session.send("Log.disable").catch(() => {});
      return false;
    };
    session.on("Runtime.executionContextCreated", ({ context }) => {
      const aux = context.auxData as { isDefault?: boolean; type?: string } | undefined;
      if (aux?.type !== "isolated" && aux?.isDefault !== false) return;
      if (isolated.size >= MAX_CONTEXTS) isolated.delete(isolated.values().next().value!);
      isolated.add(context.id);
    });
    session.on("Runtime.executionContextDestroyed", (e) => {
      isolated.delete(e.executionContextId);
    });
    session.on("Runtime.executionContextsCleared", () => isolated.clear());
    session.on("Runtime.consoleAPICalled", (e) => {
      if (!fromPage(e.executionContextId) || !admit(sizeOf(e.args))) return;
      this.#add(tabId, this.#fromApiCall(e));
      // CDP keeps every logged object alive for the client until released.
      if (++calls % RELEASE_EVERY === 0) {
        session.send("Runtime.releaseObjectGroup", { objectGroup: "console" }).catch(() => {});
        session.send("Runtime.discardConsoleEntries").catch(() => {});
      }
    });
    session.on("Runtime.exceptionThrown", ({ exceptionDetails }) => {
      const size = exceptionDetails.text.length +
        (exceptionDetails.exception ? sizeOf([exceptionDetails.exception]) : 0);
      if (!fromPage(exceptionDetails.executionContextId) || !admit(size)) return;
      this.#add(tabId, this.#fromException(exceptionDetails));
    });
    if (type !== "worker") {
      session.on("Log.entryAdded", ({ entry }) => {
        // Worker entries come again from the worker's own target.
        if (entry.source === "worker" || !admit(entry.text.length)) return;
        this.#add(tabId, this.#fromLogEntry(entry));
      });
    }
    if (type === "page") {
      session.on("Page.frameNavigated", ({ frame }) => {
        // A new document in the tab: what came before is no longer "since navigation".
        const log = frame.parentId === undefined ? this.#tabs.get(tabId) : undefined;
        if (log) log.navigation++;
      });
      session.onDetach(() => this.#tabs.forget(tabId));
    }
    session.send("Runtime.enable").catch(() => {});
    if (type !== "worker") session.send("Log.enable").catch(() => {});
  }

  /** The messages of tab `tabId` in scope for `query`, oldest first. */
  view(tabId: string, query: PageLogQuery = {}): PageLogView {
    const log = this.#tabs.get(tabId);
    const level = query.level ?? "info";
    const inScope = (log?.messages ?? []).filter((m) =>
      query.all || m.navigation === log!.navigation
    );
    const threshold = PAGE_LOG_LEVELS.indexOf(level);
    return {
      messages: inScope.filter((m) => PAGE_LOG_LEVELS.indexOf(m.level) <= threshold),
      total: inScope.length,
      errors: inScope.filter((m) => m.level === "error").length,
      warnings: inScope.filter((m) => m.level === "warning").length,
      dropped: log?.dropped ?? 0,
      muted: log?.muted ?? 0,
    };
  }

  /**
   * The answer of `browser_console_messages` for tab `tabId`: a header of counts, then the
   * messages inside an untrusted block, newest kept when the answer would pass its cap.
   */
  render(tabId: string, query: PageLogQuery, nonce: string): string {
    const v = this.view(tabId, query);
    const level = query.level ?? "info";
    const head = [`Total messages: ${v.total} (Errors: ${v.errors}, Warnings: ${v.warnings})`];
    if (v.messages.length !== v.total) {
      head.push(`Returning ${v.messages.length} messages for level "${level}"`);
    }
    const blocks: string[][] = [];
    let size = 0;
    for (let i = v.messages.length - 1; i >= 0; i--) {
      const lines = messageLines(v.messages[i]);
      const cost = lines.reduce((n, l) => n + l.length + 1, 0);
      if (size + cost > this.#limits.output) break;
      size += cost;
      blocks.unshift(lines);
    }
    const cut = v.messages.length - blocks.length;
    if (cut > 0) head.push(`${cut} older messages not shown (answer cap)`);
    if (v.dropped > 0) {
      head.push(
        `${v.dropped} older messages of this tab were dropped (the log keeps the last ${this.#limits.perTab})`,
      );
    }
    if (v.muted > 0) {
      head.push(
        `console recording stopped on ${v.muted} frame(s) or worker(s) that logged too much, too fast`,
      );
    }
    if (blocks.length === 0) return head.join("\n");
    return `${head.join("\n")}\n${untrustedBlock("console", nonce, blocks.flat(), this.#redactor)}`;
  }

  #add(tabId: string, m: Omit<PageLogEntry, "navigation">): void {
    const log = this.#tabs.write(tabId);
    log.messages.push({ ...m, navigation: log.navigation });
    if (log.messages.length > this.#limits.perTab) {
      log.messages.shift();
      log.dropped++;
    }
  }

  #fromApiCall(e: Protocol.Runtime.ConsoleAPICalledEvent): Omit<PageLogEntry, "navigation"> {
    const frames = e.stackTrace?.callFrames ?? [];
    return {
      type: e.type,
      level: levelOfType(e.type),
      text: this.#text(formatArgs(e.args.slice(0, MAX_ARGS))),
      location: frames[0] ? this.#location(frames[0].url, frames[0].lineNumber) : undefined,
      // Only a trace asks for its stack; other calls show where they were made.
      stack: e.type === "trace" ? this.#stack(frames) : [],
    };
  }

  #fromException(d: Protocol.Runtime.ExceptionDetails): Omit<PageLogEntry, "navigation"> {
    const ex = d.exception;
    // An Error's description is its stack, URLs and all: keep its message line only and
    // rebuild the frames from the structured trace.
    const described = ex?.description?.split(/\n\s+at /)[0];
    const thrown = ex?.type === "object" ? described : ex ? renderValue(ex) : undefined;
    const frames = d.stackTrace?.callFrames ?? [];
    return {
      type: "exception",
      level: "error",
      text: this.#text(thrown ? `${d.text} ${thrown}` : d.text),
      location: d.url
        ? this.#location(d.url, d.lineNumber)
        : frames[0]
        ? this.#location(frames[0].url, frames[0].lineNumber)
        : undefined,
      stack: this.#stack(frames),
    };
  }

  #fromLogEntry(entry: Protocol.Log.LogEntry): Omit<PageLogEntry, "navigation"> {
    const level = LOG_ENTRY_LEVELS.get(entry.level) ?? "info";
    return {
      type: level,
      level,
      text: this.#text(entry.text),
      location: entry.url ? this.#location(entry.url, entry.lineNumber) : undefined,
      stack: [],
    };
  }

  /** Redacted whole first: the URL scrub, the newline escapes and the cut come after. */
  #text(text: string): string {
    const rewrite = (t: string) => oneLine(scrubUrls(t));
    return redactCut(text, this.#limits.text, { redactor: this.#redactor, rewrite });
  }

  #location(url: string, line: number | undefined): string | undefined {
    if (!url) return undefined;
    const shown = redactCut(place(url), this.#limits.url, { redactor: this.#redactor });
    return line === undefined ? shown : `${shown}:${line + 1}`;
  }

  #stack(frames: Protocol.Runtime.CallFrame[]): string[] {
    const redactor = this.#redactor;
    return frames.slice(0, this.#limits.frames).map((f) => {
      const where = f.url
        ? `${redactCut(place(f.url), this.#limits.url, { redactor })}:${f.lineNumber + 1}:${
          f.columnNumber + 1
        }`
        : "<anonymous>";
      const name = redactCut(f.functionName, 100, { redactor, rewrite: oneLine });
      return `${name || "<anonymous>"} (${where})`;
    });
  }
}

/**
 * A script's URL as origin and path; a root path keeps its slash so that the `:line` after
 * it cannot read as a port.
 */
function place(url: string): string {
  const shown = displayUrl(url, undefined);
  return /^[a-z][a-z0-9+.-]*:\/\/[^/]+$/i.test(shown) ? `${shown}/` : shown;
}

/** A message as the lines of the answer: the message, then its frames indented. */
function messageLines(m: PageLogEntry): string[] {
  const at = m.location ? ` @ ${m.location}` : "";
  const head = m.type === "exception"
    ? `[ERROR] ${m.text}${at}`
    : `[${m.type.toUpperCase()}] ${m.text}${at}`;
  return [head, ...m.stack.map((f) => `    at ${f}`)];
}

/** Playwright's mapping of console API types to levels. */
function levelOfType(type: string): PageLogLevel {
  switch (type) {
    case "assert":
    case "error":
      return "error";
    case "warning":
      return "warning";
    case "clear":
    case "debug":
    case "endGroup":
    case "profile":
    case "profileEnd":
    case "startGroup":
    case "startGroupCollapsed":
    case "trace":
      return "debug";
    default:
      return "info";
  }
}
