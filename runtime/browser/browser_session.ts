/**
 * One agent's browser: its own Chromium process, private profile, tabs, refs and notices.
 * Sessions share nothing. Calls are serialized so two tool calls never interleave.
 *
 * @module
 */
import {
  type BrowserProcess,
  CdpLayerError,
  type CdpSession,
  launchBrowser,
  type ProfileStore,
  TargetTracker,
  type TrackedTarget,
} from "../../cdp/mod.ts";
import type { AuditEvent } from "../audit/audit_row.ts";
import type { EgressProxy, ProxyListener } from "../egress/egress_proxy.ts";
import { proxyJudge } from "../egress/proxy_judge.ts";
import { type BlockedRequest, RequestGuard } from "../egress/request_guard.ts";
import { BrowserLostError, OmotaiError, StaleRefError } from "../errors.ts";
import type { Boundary } from "../gate/boundary.ts";
import { buildOutline } from "../snapshot/outline.ts";
import { type PageView, type RenderedPage, renderPage } from "../snapshot/page_view.ts";
import { captureTab } from "./capture.ts";
import type { Element } from "./element_ops.ts";
import { BlockedRequests } from "./blocked_notice.ts";
import { RefTable } from "./ref_table.ts";
import type { SessionCounters } from "../policy/fact_builders.ts";

/** How a session starts its browser. */
export interface BrowserSessionOptions {
  profiles: ProfileStore;
  executable: string;
  headful?: boolean;
  extraArgs?: string[];
  /**
   * The egress boundary: every request of every target is judged by `boundary`, and the
   * browser reaches the network only through `proxy`. Without it nothing is guarded
   * (only unit tests of the browser layer leave it out).
   */
  egress?: { boundary: Boundary; proxy: EgressProxy };
}

/** A tab as the tools list it. */
export interface TabInfo {
  index: number;
  targetId: string;
  url: string;
  title: string;
  current: boolean;
}

/** A captured snapshot plus counts. */
export interface SnapshotResult extends RenderedPage {
  docId: string;
  interactive: number;
}

interface Live {
  browser: BrowserProcess;
  tracker: TargetTracker;
  generation: number;
  proxy?: ProxyListener;
}

/** Owns one Chromium for one MCP session. */
export class BrowserSession implements AsyncDisposable {
  /** Random per-session nonce carried by untrusted-content markers. */
  readonly nonce: string = randomHex(8);
  /** Session id in audit rows. */
  readonly id: string = `s-${randomHex(6)}`;
  /** The agent's name (the MCP client's, until agent keys exist). */
  agent: string | null = null;
  readonly #options: BrowserSessionOptions;
  #live: Live | undefined;
  #starting: Promise<Live> | undefined;
  #generation = 0;
  #currentTabId: string | undefined;
  #notices: string[] = [];
  #refs = new RefTable();
  #docIds = new Map<string, string>();
  #docSeq = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #disposed = false;
  #callGeneration: number | undefined;
  /** The tab Chromium shows in front; input to a background tab stalls until it times out. */
  #frontTabId: string | undefined;
  /** >0 while the runtime itself opens a tab, so that tab is not announced as a popup. */
  #ownTabs = 0;
  /** Tabs the runtime opened itself (their attach may be announced after `#ownTabs` drops). */
  #ownTabIds = new Set<string>();
  /** Pages already announced (or known to be the runtime's own). */
  #announced = new Set<string>();

  readonly #startedAt = Date.now();
  #actionsUsed = 0;
  #guard: RequestGuard | undefined;
  #blocked = new BlockedRequests();

  constructor(options: BrowserSessionOptions) {
    this.#options = options;
    const egress = options.egress;
    if (egress) {
      this.#guard = new RequestGuard({
        boundary: egress.boundary,
        session: () => ({ id: this.id, agent: this.agent }),
        counters: () => this.counters(),
        onBlocked: (r) => this.#onBlocked(r),
      });
    }
  }

  /**
   * Appends an audit row for this session. Throws `AUDIT_UNAVAILABLE` when it cannot;
   * callers turn that into a deny.
   */
  audit(event: Omit<AuditEvent, "session" | "agent">): void {
    this.#options.egress?.boundary.record({ ...event, session: this.id, agent: this.agent });
  }

  #lifecycle(kind: string, reason?: string): void {
    try {
      this.audit({ kind, source: "lifecycle", decision: "event", reason });
    } catch (err) {
      console.error(`omotai: audit: ${(err as Error).message.slice(0, 200)}`);
    }
  }

  #onBlocked(r: BlockedRequest): void {
    this.#blocked.add(r);
  }

  /** The requests blocked since the last call, as one notice line (or undefined). */
  takeBlocked(): string | undefined {
    return this.#blocked.take();
  }

  /** Counters the policy facts carry. */
  counters(): SessionCounters {
    return {
      tainted: false,
      actionsUsed: this.#actionsUsed,
      secondsElapsed: (Date.now() - this.#startedAt) / 1000,
      confirmationsUsed: 0,
    };
  }

  /** Records one allowed agent action. */
  countAction(): void {
    this.#actionsUsed++;
  }

  /**
   * Runs `fn` after every earlier call of this session has finished. A browser that dies
   * during `fn` fails the call with BROWSER_LOST; only the next call starts a fresh one.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const call = async () => {
      const live = this.#live;
      this.#callGeneration = live && !live.browser.hasExited ? live.generation : undefined;
      try {
        return await fn();
      } finally {
        this.#callGeneration = undefined;
      }
    };
    const run = this.#queue.then(call, call);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Notices gathered since the last call (new tabs, a lost browser); clears them. */
  takeNotices(): string[] {
    // A popup whose setup is still finishing is already a tab the snapshot counted.
    this.#announceNewTabs();
    const n = this.#notices;
    this.#notices = [];
    return n;
  }

  /** The running browser process, if any (tests use it to simulate a crash). */
  get browserProcess(): BrowserProcess | undefined {
    return this.#live?.browser;
  }

  /** Starts the browser if needed; restarts it after a crash with a notice. */
  async ensureStarted(): Promise<Live> {
    if (this.#disposed) throw new OmotaiError("SESSION_CLOSED", "this session is closed");
    if (this.#live && !this.#live.browser.hasExited) return this.#live;
    if (this.#live) {
      if (this.#callGeneration === this.#live.generation) throw new BrowserLostError();
      this.#live = undefined;
      this.#lifecycle("browser_lost");
      this.#notices.push(
        "the previous browser exited; a fresh one was started (earlier pages and cookies are gone)",
      );
    }
    this.#starting ??= this.#launch().finally(() => this.#starting = undefined);
    return await this.#starting;
  }

  async #launch(): Promise<Live> {
    const profileDir = await this.#options.profiles.create();
    const egress = this.#options.egress;
    let proxy: ProxyListener | undefined;
    let browser: BrowserProcess;
    try {
      const extraArgs = [...(this.#options.extraArgs ?? [])];
      if (egress) {
        proxy = await egress.proxy.listen(proxyJudge({
          boundary: egress.boundary,
          session: () => ({ id: this.id, agent: this.agent }),
          counters: () => this.counters(),
        }));
        extraArgs.push(...egressArgs(proxy.port));
      }
      browser = await launchBrowser({
        executable: this.#options.executable,
        profileDir,
        headful: this.#options.headful,
        extraArgs,
      });
    } catch (err) {
      proxy?.[Symbol.dispose]();
      await this.#options.profiles.remove(profileDir).catch(() => {});
      if (err instanceof OmotaiError) throw err;
      throw new OmotaiError("BROWSER_LAUNCH_FAILED", (err as Error).message);
    }
    const generation = ++this.#generation;
    this.#lifecycle("browser_started");
    browser.exited.then(async () => {
      proxy?.[Symbol.dispose]();
      // The profile goes with the process, however it ended.
      await this.#options.profiles.remove(profileDir).catch((e) =>
        console.error("omotai: could not remove profile dir:", e)
      );
    });
    this.#ownTabs++;
    try {
      // Downloads would write page-chosen bytes to disk and bypass snapshots: refused.
      await browser.connection.root.send("Browser.setDownloadBehavior", { behavior: "deny" });
      const tracker = await TargetTracker.start(browser.connection, (t) => this.#prepare(t));
      tracker.onChange((event, t) => this.#onTargetChange(event, t, generation));
      const live: Live = { browser, tracker, generation, proxy };
      this.#live = live;
      this.#currentTabId = undefined;
      await this.#firstTab(live);
      return live;
    } finally {
      this.#ownTabs--;
    }
  }

  #prepare(t: TrackedTarget): Promise<void> {
    // Everything is sent before the tracker resumes the target (see AttachHook).
    const setup: Promise<unknown>[] = [];
    if (t.info.type === "page" || t.info.type === "iframe") {
      setup.push(
        t.session.send("Page.enable"),
        t.session.send("Page.setLifecycleEventsEnabled", { enabled: true }),
      );
    }
    if (this.#guard) setup.push(this.#guard.install(t));
    return Promise.all(setup).then(() => {});
  }

  #onTargetChange(event: string, t: TrackedTarget, generation: number): void {
    if (generation !== this.#generation) return;
    if (event === "failed") {
      // Closed unguarded rather than run: the audit says so (type only, never the URL).
      this.#lifecycle("target_setup_failed", t.info.type);
      return;
    }
    if (t.info.type !== "page") return;
    if (event === "attached") this.#announceNewTabs();
    if (event === "detached" && t.info.targetId === this.#currentTabId) {
      this.#currentTabId = undefined;
      this.#notices.push("the current tab closed");
    }
  }

  /** Notices pages opened by a page (popups, target=_blank): news to the agent, once each. */
  #announceNewTabs(): void {
    const pages = this.#pageTargets();
    pages.forEach((p, index) => {
      const id = p.info.targetId;
      if (this.#announced.has(id)) return;
      this.#announced.add(id);
      // The newest page is in front: input to a background tab would stall.
      this.#frontTabId = id;
      if (this.#ownTabs > 0 || this.#ownTabIds.has(id)) return;
      this.#notices.push(`a new tab opened as tab ${index}; use browser_tabs to select it`);
    });
  }

  async #firstTab(live: Live): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const pages = this.#pageTargets(live);
      if (pages.length > 0) {
        this.#currentTabId = pages[0].info.targetId;
        this.#ownTabIds.add(pages[0].info.targetId);
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const { targetId } = await live.browser.connection.root.send("Target.createTarget", {
      url: "about:blank",
    });
    this.#ownTabIds.add(targetId);
    this.#currentTabId = targetId;
  }

  #pageTargets(live = this.#live): TrackedTarget[] {
    return live?.tracker.targets().filter((t) => t.info.type === "page") ?? [];
  }

  /** The tabs, in the order they opened. */
  async tabs(): Promise<TabInfo[]> {
    const live = await this.ensureStarted();
    const current = await this.currentTab();
    // Tracked infos lag behind title changes; ask the browser for fresh ones.
    const { targetInfos } = await live.browser.connection.root.send("Target.getTargets");
    const fresh = new Map(targetInfos.map((i) => [i.targetId, i]));
    return this.#pageTargets().map((t, index) => {
      const info = fresh.get(t.info.targetId) ?? t.info;
      return {
        index,
        targetId: info.targetId,
        url: info.url,
        title: info.title,
        current: t === current,
      };
    });
  }

  /** The current tab; picks the newest remaining one if it closed, opens one if none. */
  async currentTab(): Promise<TrackedTarget> {
    const live = await this.ensureStarted();
    const pages = this.#pageTargets(live);
    const current = pages.find((p) => p.info.targetId === this.#currentTabId);
    if (current) return current;
    if (pages.length > 0) {
      this.#currentTabId = pages.at(-1)!.info.targetId;
      return pages.at(-1)!;
    }
    this.#ownTabs++;
    try {
      const { targetId } = await live.browser.connection.root.send("Target.createTarget", {
        url: "about:blank",
      });
      this.#ownTabIds.add(targetId);
      this.#currentTabId = targetId;
      for (let i = 0; i < 100; i++) {
        const t = live.tracker.get(targetId);
        if (t) return t;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      this.#ownTabs--;
    }
    throw new OmotaiError("NO_TAB", "could not open a tab");
  }

  /** Makes tab `index` current. */
  async selectTab(index: number): Promise<TrackedTarget> {
    const pages = (await this.ensureStarted(), this.#pageTargets());
    const t = pages[index];
    if (!t) throw new OmotaiError("NO_SUCH_TAB", `there is no tab ${index} (${pages.length} open)`);
    this.#currentTabId = t.info.targetId;
    await this.#live!.browser.connection.root.send("Target.activateTarget", {
      targetId: t.info.targetId,
    }).catch(() => {});
    return t;
  }

  /** Closes tab `index` (the current one when omitted). */
  async closeTab(index?: number): Promise<void> {
    const live = await this.ensureStarted();
    const pages = this.#pageTargets(live);
    const t = index === undefined ? await this.currentTab() : pages[index];
    if (!t) throw new OmotaiError("NO_SUCH_TAB", `there is no tab ${index} (${pages.length} open)`);
    const detached = new Promise<void>((r) => t.session.onDetach(r));
    await live.browser.connection.root.send("Target.closeTarget", { targetId: t.info.targetId });
    await Promise.race([detached, new Promise((r) => setTimeout(r, 2_000))]);
    if (this.#currentTabId === t.info.targetId) this.#currentTabId = undefined;
    this.#notices = this.#notices.filter((n) => n !== "the current tab closed");
  }

  /** Captures the current tab and renders page `page` of its outline. */
  async snapshot(page = 1, maxTokens?: number): Promise<SnapshotResult> {
    const { view, interactive } = await this.#capture();
    const blocked = this.takeBlocked();
    if (blocked) this.#notices.push(blocked);
    return { ...renderPage(view, page, maxTokens), docId: view.docId, interactive };
  }

  /** The current tab's outline as plain text (all pages), for text waits. */
  async outlineText(): Promise<string> {
    const { view } = await this.#capture();
    return [view.title, ...view.lines].join("\n");
  }

  async #capture(): Promise<{ view: PageView; interactive: number }> {
    const live = await this.ensureStarted();
    const tab = await this.currentTab();
    const capture = await captureTab(tab.session, live.tracker);
    const docId = this.#docId(capture.mainLoaderId);
    const { lines, brief, stats } = buildOutline(capture.root, (frame, backendNodeId) => {
      const f = capture.frames.get(frame.key)!;
      return this.#refs.issue({
        sessionId: f.session.id!,
        tabId: tab.info.targetId,
        frameId: f.frameId,
        loaderId: f.loaderId,
        docId,
        backendNodeId,
      });
    });
    const pages = this.#pageTargets(live);
    const view: PageView = {
      nonce: this.nonce,
      origin: originOf(capture.url),
      path: displayPageUrl(capture.url),
      title: capture.title || tab.info.title,
      docId,
      tabIndex: pages.indexOf(tab),
      tabCount: pages.length,
      lines,
      brief,
    };
    return { view, interactive: stats.interactive };
  }

  /** Resolves a ref to a live element of the current document, or throws `STALE_REF`. */
  async resolve(ref: string): Promise<Element> {
    const live = await this.ensureStarted();
    const target = this.#refs.lookup(ref);
    const tab = await this.currentTab();
    if (target.tabId !== tab.info.targetId) {
      throw new StaleRefError(
        `ref ${ref} belongs to another tab; select that tab or take a new snapshot`,
      );
    }
    if (this.#frontTabId !== tab.info.targetId) {
      await tab.session.send("Page.bringToFront").catch(() => {});
      this.#frontTabId = tab.info.targetId;
    }
    const session = live.browser.connection.session(target.sessionId);
    if (!session) {
      throw new StaleRefError(`ref ${ref} belongs to a frame that is gone; take a new snapshot`);
    }
    const current = this.#docId(await frameLoaderId(tab.session, undefined));
    const frameLoader = await frameLoaderId(session, target.frameId);
    if (current !== target.docId || frameLoader !== target.loaderId || target.backendNodeId < 0) {
      throw new StaleRefError(
        `ref ${ref} belongs to document ${target.docId}, but the tab now shows ${current}; take a new snapshot`,
      );
    }
    return {
      session,
      page: tab.session,
      frameId: target.frameId,
      backendNodeId: target.backendNodeId,
      ref,
    };
  }

  /** The current tab's page session. */
  async page(): Promise<CdpSession> {
    return (await this.currentTab()).session;
  }

  /** Maps low-level failures to what the model should see. */
  translateError(err: unknown): unknown {
    if (err instanceof OmotaiError) return err;
    if (err instanceof CdpLayerError) {
      if (this.#live?.browser.hasExited || err.code === "CDP_CLOSED") {
        // The call that saw the browser die reports it; the next call starts a fresh one.
        return this.#live?.browser.hasExited ? new BrowserLostError() : new OmotaiError(
          "TARGET_CLOSED",
          "the tab or frame closed while acting; take a new snapshot",
        );
      }
      if (err.code === "CDP_TIMEOUT") {
        return new OmotaiError("BROWSER_TIMEOUT", "the browser did not answer in time");
      }
      return new OmotaiError("BROWSER_ERROR", "the browser refused the action");
    }
    return err;
  }

  #docId(loaderId: string): string {
    let id = this.#docIds.get(loaderId);
    if (!id) {
      id = `d${++this.#docSeq}`;
      this.#docIds.set(loaderId, id);
    }
    return id;
  }

  /** Stops the browser; its profile directory is removed. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    const live = this.#live ?? await this.#starting?.catch(() => undefined);
    this.#live = undefined;
    this.#lifecycle("session_closed");
    if (live) {
      live.proxy?.[Symbol.dispose]();
      await live.browser.close();
      await live.browser.exited;
      // Wait for the exit handler's profile removal.
      await this.#options.profiles.remove(live.browser.profileDir).catch(() => {});
    }
  }
}

async function frameLoaderId(session: CdpSession, frameId: string | undefined): Promise<string> {
  const { frameTree } = await session.send("Page.getFrameTree", undefined, { timeoutMs: 5_000 });
  if (frameId === undefined) return frameTree.frame.loaderId;
  const stack = [frameTree];
  while (stack.length > 0) {
    const t = stack.pop()!;
    if (t.frame.id === frameId) return t.frame.loaderId;
    stack.push(...(t.childFrames ?? []));
  }
  return "";
}

function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.origin === "null" ? u.protocol : u.origin;
  } catch {
    return "unknown";
  }
}

function displayPageUrl(url: string): string {
  try {
    const u = new URL(url);
    // The origin is on the untrusted-page marker; the path is enough here.
    if (u.protocol === "http:" || u.protocol === "https:") return u.pathname;
    return u.protocol === "about:" ? u.href.split(/[?#]/)[0] : u.protocol;
  } catch {
    return "unknown";
  }
}

/**
 * Chromium flags that leave the proxy as the only way out: loopback is not bypassed, and
 * WebRTC may not send UDP outside the proxy (which speaks TCP only).
 */
export function egressArgs(port: number): string[] {
  return [
    `--proxy-server=http://127.0.0.1:${port}`,
    "--proxy-bypass-list=<-loopback>",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
  ];
}

function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
