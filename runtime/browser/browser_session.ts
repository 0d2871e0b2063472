/**
 * One agent's browser: its own Chromium process and private profile, started on first use
 * and restarted after a crash. The facade over the session's tabs, snapshots and state;
 * calls are serialized so two tool calls never interleave.
 *
 * A fault in this session stays in it: a message from the browser the runtime cannot take
 * (over the CDP cap, not UTF-8 JSON), a handler of the session's own that throws, or a page
 * over the browser's memory limit (an OOM kill in its cgroup) ends this session's browser
 * alone (`browser_end.ts`), audited with its code; the call under way fails with
 * `BROWSER_LOST` naming that code, and the next call starts a fresh browser.
 *
 * @module
 */
import {
  type BrowserProcess,
  CdpFaultError,
  type CdpSession,
  type TrackedTarget,
} from "../../cdp/mod.ts";
import type { AuditEvent, AuditSink, AuditWriter } from "../store/mod.ts";
import { log, OmotaiError } from "../mod.ts";
import { browserLost, endOf } from "./browser_end.ts";
import { RefusedRequests } from "./refused_notice.ts";
import { CallQueue } from "./call_queue.ts";
import { whileOthersQuiet } from "./quiet_tabs.ts";
import type { Element } from "./element_ops.ts";
import type { BrowserHooks, BrowserHooksFactory } from "./hooks.ts";
import type { Admission } from "./admission.ts";
import type { BrowserStart, WarmSource } from "./launch.ts";
import { liveGone, SessionBrowser } from "./session_browser.ts";
import type { Live } from "./live.ts";
import { Notices } from "./notices.ts";
import type { PageView } from "../snapshot/mod.ts";
import { PageSnapshots, type Presented, type SnapshotMode } from "./page_snapshot.ts";
import { SessionState } from "./session_state.ts";
import { type TabInfo, Tabs } from "./tabs.ts";
import { translateBrowserError } from "./translate_error.ts";
import { WedgeGuard } from "./wedge_guard.ts";
import type { CallWatchBounds } from "./call_watch.ts";
import { PageLog } from "./page_log.ts";
import { FileChoosers } from "./file_choosers.ts";
import { LeftBehind } from "./left_behind.ts";
import { NetworkLog } from "./network_log.ts";

/** How a session starts its browser. */
export interface BrowserSessionOptions extends BrowserStart {
  /** Where the session's rows go (lifecycle here, actions from the tool pipeline). */
  /** Where its rows go; a writer's `appendSoon` lets an action wait until its row is kept. */
  audit: AuditSink | AuditWriter;
  /** Egress and anything else that shapes the browser; see `BrowserHooks`. */
  hooks?: BrowserHooksFactory;
  /** Browsers started ahead of their session (taken when the hooks can bind them). */
  pool?: WarmSource;
  /** Admits page loads a few at a time across the runtime's sessions; none: all at once. */
  loads?: Admission;
  /** The dialog rate rule's window (default `LOOP_WINDOW_MS`; see `DialogsOptions`). */
  dialogLoopWindowMs?: number;
  /** The call watch's bounds (default: the watch's own; see `CallWatchBounds`). */
  callWatch?: CallWatchBounds;
}

/** A scanned snapshot plus counts. */
export interface SnapshotResult extends Presented {
  docId: string;
  interactive: number;
  /** Reading mode: whether the page had an article to read. */
  article?: boolean;
}

/** Owns one Chromium for one MCP session. */
export class BrowserSession implements AsyncDisposable {
  /** Random per-session nonce carried by untrusted-content markers. */
  readonly nonce: string = randomHex(8);
  /** Session id in audit rows. */
  readonly id: string = `s-${randomHex(6)}`;
  /** The agent's name (the MCP client's, until agent keys exist). */
  agent: string | null = null;
  /** Counters and taint. */
  readonly state: SessionState = new SessionState();
  /** Requests refused since the last snapshot. */
  readonly refused: RefusedRequests = new RefusedRequests();
  readonly #options: BrowserSessionOptions;
  readonly #hooks: BrowserHooks;
  readonly #notices = new Notices();
  readonly #tabs = new Tabs(this.#notices);
  readonly #snapshots = new PageSnapshots(this.nonce);
  /** Dialogs, call watches and recovery from pages that would wedge the session. */
  readonly guard: WedgeGuard;
  /** What the pages of every tab logged (bounded), for browser_console_messages. */
  readonly pageLog: PageLog = new PageLog();
  /** Requests of every tab since its page loaded (bounded), with refusal reasons. */
  readonly network: NetworkLog = new NetworkLog({}, (r) => this.refused.add(r));
  /** File choosers waiting for `browser_file_upload`. */
  readonly choosers: FileChoosers = new FileChoosers((c) =>
    this.#notices.push(
      `a file chooser opened on tab ${
        this.guard.tabIndex(c.tabId)
      }; answer it with browser_file_upload {"paths": [...]}`,
    )
  );
  /** The browser, through its lives (started, restarted, replaced, ended). */
  readonly #browser: SessionBrowser;
  readonly #calls = new CallQueue();
  #disposed = false;
  readonly #ends: (() => void)[] = [];
  #callGeneration: number | undefined;
  /** Whether the call under way failed by a timeout (its recovery is owed). */
  #timedOut = false;

  /** The browser as last started (may be gone). */
  get #live(): Live | undefined {
    return this.#browser.current;
  }

  constructor(options: BrowserSessionOptions) {
    this.#options = options;
    this.guard = new WedgeGuard({
      tabs: this.#tabs,
      notices: this.#notices,
      live: () => this.#live,
      lifecycle: (kind, reason) => this.#lifecycle(kind, reason),
      scanning: () => this.#snapshots.scanning,
      replaceBrowser: (reason) => this.#browser.replace(reason),
      endedForMemory: () => this.#browser.endedForMemory(),
      loopWindowMs: options.dialogLoopWindowMs,
      callWatch: options.callWatch,
    });
    this.#browser = new SessionBrowser({
      start: options,
      hooks: () => this.#hooks,
      // Followers of every target, in the order they are set up (the crash watcher last).
      watchers: [
        // Its tabs' navigations release what earlier documents left behind (the hook's).
        new LeftBehind(() => this.#hooks.markNavigation?.bind(this.#hooks)),
        this.guard.dialogs,
        this.guard.crashes,
        this.choosers,
        this.pageLog,
        this.network,
      ],
      tabs: this.#tabs,
      notices: this.#notices,
      log: (line) => log(`session ${this.id}: cdp: ${line}`),
      lifecycle: (kind, reason, rule) => this.#lifecycle(kind, reason, rule),
      isolation: () => this.isolation,
      closed: () => this.#disposed,
      callGeneration: () => this.#callGeneration,
    });
    this.#hooks = options.hooks?.(this) ?? {};
  }

  /**
   * Appends an audit row for this session. Throws `AUDIT_UNAVAILABLE` when it cannot;
   * callers turn that into a deny.
   */
  audit(event: Omit<AuditEvent, "session" | "agent">): void {
    this.#options.audit.append({ ...event, session: this.id, agent: this.agent });
  }

  /**
   * Appends an audit row and resolves once it is kept (an action's verdict, before the
   * action runs); rejects with `AUDIT_UNAVAILABLE` when it cannot be, and callers then deny.
   */
  async auditKept(event: Omit<AuditEvent, "session" | "agent">): Promise<void> {
    const row = { ...event, session: this.id, agent: this.agent };
    const sink = this.#options.audit;
    if ("appendSoon" in sink) await sink.appendSoon(row);
    else sink.append(row);
  }

  #lifecycle(kind: string, reason?: string, rule?: string): void {
    try {
      this.audit({ kind, source: "lifecycle", decision: "event", reason, rule });
    } catch (err) {
      log(`session ${this.id}: audit: ${err instanceof OmotaiError ? err.code : errorName(err)}`);
    }
  }

  /**
   * Runs a page load (and the snapshot after it) in its turn among every session's loads;
   * throws `SERVER_BUSY` when none came in time, or `CANCELLED` when `signal` aborted while
   * it waited (`load` then never ran).
   */
  loading<T>(load: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.#options.loads ? this.#options.loads.run(load, signal) : load();
  }

  /**
   * Runs `fn` after every earlier call of this session has finished. A browser that dies
   * during `fn` fails the call with BROWSER_LOST; only the next call starts a fresh one.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const call = async () => {
      const live = this.#live;
      this.#callGeneration = live && !liveGone(live) ? live.generation : undefined;
      this.#timedOut = false;
      try {
        return await fn();
      } catch (err) {
        // A call that failed because the kernel killed a process of its browser for memory
        // ends that browser, and fails with BROWSER_LOST naming it (`translateError`).
        const now = this.#live;
        if (now) await this.#browser.checkMemory(now);
        throw err;
      } finally {
        this.#callGeneration = undefined;
      }
    };
    return this.#calls.run(call);
  }

  /**
   * Ends the running browser as the CDP pipe's meter does (`SESSION_FLOODING`: killed, audited
   * `browser_ended`, the call under way fails naming it, the next call starts a fresh one):
   * the egress proxy reported that its held request bodies kept over their rate.
   */
  flooding(): void {
    this.#live?.browser.connection.fail(
      new CdpFaultError(
        "SESSION_FLOODING",
        "the browser sent request bodies faster than the runtime's byte-rate cap for too long",
      ),
    );
  }

  /** Notices gathered since the last call (new tabs, a lost browser); clears them. */
  takeNotices(): string[] {
    // A popup whose setup is still finishing is already a tab the snapshot counted.
    this.#tabs.announceNew(this.#live);
    return this.#notices.take();
  }

  /** The origin of the current tab's page as Chromium last reported it (never launches). */
  currentOrigin(): string | null {
    return this.#tabs.originOf(this.#live);
  }

  /**
   * The paths the browser is to open for files the runtime chose (an upload): the files
   * themselves, or, in a sandbox that shows the browser no host path, copies it can read.
   */
  async uploadable(files: readonly string[]): Promise<string[]> {
    const isolation = this.#options.isolation;
    if (!isolation) return [...files];
    return await isolation.stage((await this.ensureStarted()).profileDir, files);
  }

  /** Whether this session's browsers run in a network namespace of their own. */
  get isolation(): "netns" | "none" {
    return this.#options.isolation ? "netns" : "none";
  }

  /**
   * The cgroup this session's browsers are bounded by: `cgroup v2`, `cgroup v1`,
   * `cgroup systemd` (a systemd scope each) or `none`.
   */
  get cgroup(): "cgroup v2" | "cgroup v1" | "cgroup systemd" | "none" {
    const groups = this.#options.groups;
    return groups ? `cgroup ${groups.backend}` : "none";
  }

  /** The running browser process, if any (tests use it to simulate a crash). */
  get browserProcess(): BrowserProcess | undefined {
    return this.#live?.browser;
  }

  /**
   * Starts the browser if needed; restarts it after a crash (or after the runtime ended it
   * over a fault) with a notice that says which.
   */
  ensureStarted(): Promise<Live> {
    return this.#browser.ensureStarted();
  }

  /** The tabs, in the order they opened. */
  async tabs(): Promise<TabInfo[]> {
    return await this.#tabs.list(await this.ensureStarted());
  }

  /** The current tab; picks the newest remaining one if it closed, opens one if none. */
  async currentTab(): Promise<TrackedTarget> {
    return await this.#tabs.current(await this.ensureStarted());
  }

  /** Makes tab `index` current. */
  async selectTab(index: number): Promise<TrackedTarget> {
    return await this.#tabs.select(await this.ensureStarted(), index);
  }

  /**
   * Closes tab `index` (the current one when omitted); a dialog open on it is dismissed
   * first (audited), and one that will not let go has its tab killed.
   */
  async closeTab(index?: number): Promise<void> {
    const live = await this.ensureStarted();
    const tab = await this.#tabs.at(live, index);
    await this.guard.leave(tab, "TAB_CLOSED", (t) => this.#tabs.closeTarget(live, t));
  }

  /**
   * Runs `fn`, a navigation of `tab`, with the session's other tabs frozen and their loads
   * stopped (`quiet_tabs.ts`): no other tab's requests hold the connections it needs.
   */
  async quietOthers<T>(tab: TrackedTarget, fn: () => Promise<T>): Promise<T> {
    const others = this.#tabs.pages(this.#live).filter((t) => t.session !== tab.session);
    return await whileOthersQuiet(others.map((t) => t.session), fn);
  }

  /** The current tab's page session. */
  async page(): Promise<CdpSession> {
    return (await this.currentTab()).session;
  }

  /**
   * Scans the current tab and renders page `page` of its outline, in `changes` mode what
   * changed since the agent's last view of the same document, in `card` mode its page card
   * (`near`: refs the action acted on).
   */
  async snapshot(
    page = 1,
    maxTokens?: number,
    mode: SnapshotMode = "full",
    typed: readonly { ref: string; value: string }[] = [],
    near: readonly string[] = [],
  ): Promise<SnapshotResult> {
    if (this.state.tainted) return this.#statusOnly();
    const scanned = await this.#scan();
    const refused = this.refused.take();
    if (refused) this.#notices.push(refused);
    const shown = this.#snapshots.present(scanned, mode, page, maxTokens, typed, near);
    return { ...shown, docId: scanned.view.docId, interactive: scanned.interactive };
  }

  /**
   * Scans the current tab for `browser_find`: its whole view (every page's lines), which the
   * agent is then shown in part, so its refs count as shown (see `PageSnapshots.shownInPart`).
   * A tainted session's page is never read: `status` is the line {@link snapshot} gives.
   */
  async findView(): Promise<{ view: PageView } | { status: string }> {
    if (this.state.tainted) return { status: (await this.snapshot()).text };
    const scanned = await this.#scan();
    const refused = this.refused.take();
    if (refused) this.#notices.push(refused);
    this.#snapshots.shownInPart(scanned);
    return { view: scanned.view };
  }

  /**
   * Reading mode: page `page` of the current tab's main text (its article, without the
   * page's chrome; its links with the outline's refs), paged like the outline. A tainted
   * session gets the outline's status line and nothing of the page.
   */
  async read(page = 1, maxTokens?: number): Promise<SnapshotResult> {
    if (this.state.tainted) return this.#statusOnly();
    const live = await this.ensureStarted();
    const tab = await this.#tabs.current(live);
    const pages = this.#tabs.pages(live);
    const scan = () => this.#snapshots.scan(live, tab, pages);
    const shown = await this.#snapshots.read(tab, pages, scan, page, maxTokens);
    const refused = this.refused.take();
    if (refused) this.#notices.push(refused);
    return { ...shown, diff: false, interactive: 0 };
  }

  /**
   * What a tainted session's snapshot is: a credential was typed here, so the page is never
   * read, and nothing it echoes (the password in its text, reversed, in its title) can reach
   * the model.
   */
  #statusOnly(): SnapshotResult {
    const text = `status only: this session is tainted (${this.state.taintReason}); ` +
      `the page on ${this.currentOrigin() ?? "an unknown origin"} is not shown`;
    return { text, page: 1, pages: 1, diff: false, docId: "", interactive: 0 };
  }

  /** The current tab's outline as plain text (all pages), for text waits. */
  async outlineText(): Promise<string> {
    const { view } = await this.#scan();
    return [view.title, ...view.lines].join("\n");
  }

  async #scan() {
    const live = await this.ensureStarted();
    const tab = await this.#tabs.current(live);
    return await this.#snapshots.scan(live, tab, this.#tabs.pages(live));
  }

  /** Resolves a ref to a live element of the current document, or throws `STALE_REF`. */
  async resolve(ref: string): Promise<Element> {
    const live = await this.ensureStarted();
    const tab = await this.#tabs.current(live);
    await this.#tabs.bringToFront(tab);
    return await this.#snapshots.resolve(live, tab, ref);
  }

  /**
   * Maps low-level failures to what the model should see. Any failure of a call whose
   * browser the runtime ended is that end: `BROWSER_LOST` with the fault's code.
   */
  translateError(err: unknown): unknown {
    const live = this.#live;
    const end = live && endOf(live);
    if (end && !(err instanceof OmotaiError)) return browserLost(end);
    const out = translateBrowserError(err, live !== undefined && liveGone(live));
    if (out instanceof OmotaiError && out.code === "BROWSER_TIMEOUT") this.#timedOut = true;
    return out;
  }

  /**
   * If the call under way failed by a timeout: the recovery every hang gets (the current tab
   * closed, its renderer killed if it will not go, the browser replaced if it does not
   * answer; see `hang_recovery.ts`), run before the call returns so that the next one finds
   * a session that answers. Returns what the runtime did, or undefined when no call timed out.
   */
  async recoverTimeout(): Promise<string | undefined> {
    if (!this.#timedOut) return undefined;
    this.#timedOut = false;
    return await this.guard.recoverTimeout();
  }

  /**
   * Runs `fn` once when the session ends (after its browser is gone), or now when it ended
   * already: what the runtime holds for the session beyond its browser (a capture's
   * confinement) is let go there. Never throws into the session's end.
   */
  onEnd(fn: () => void): void {
    if (this.#disposed) {
      fn();
      return;
    }
    this.#ends.push(fn);
  }

  /** Stops the browser (its profile directory is removed), then runs the `onEnd` hooks. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      await this.#browser.end();
    } finally {
      for (const fn of this.#ends.splice(0)) {
        try {
          fn();
        } catch (err) {
          log(`session ${this.id}: end hook: ${errorName(err)}`);
        }
      }
    }
  }
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
