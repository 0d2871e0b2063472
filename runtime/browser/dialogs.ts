/**
 * JavaScript dialogs (`alert`, `confirm`, `prompt`, `beforeunload`) of every tab. While one
 * is open its page's renderer waits for an answer, so the session must know: an action that
 * opens one returns at once with it, the next call is told about it, only
 * `browser_handle_dialog` answers it, and a page that opens dialogs in a loop loses its tab.
 *
 * @module
 */
import type { CdpSession, Protocol, TrackedTarget } from "../../cdp/mod.ts";
import { redactCut } from "../redact/mod.ts";
import type { TargetWatcher } from "./hooks.ts";
import { tabOf } from "./tab_of.ts";

/** Dialogs one tab may open within `LOOP_WINDOW_MS` before the runtime closes the tab. */
export const LOOP_DIALOGS = 5;
/** The window of the loop rule (`DialogsOptions.loopWindowMs` may narrow it in a test). */
export const LOOP_WINDOW_MS = 30_000;
/**
 * Dialogs one tab may open in a row, whatever their pace, with no progress between them: the
 * tab's dialog that reaches this count is a loop, and the tab is closed. Progress is an action
 * of the agent on the tab other than answering a dialog (a navigation, a click, typing, a
 * key, a selection: `Dialogs.progress()`); a page's own navigations and new documents are
 * not (a page can reload itself between two dialogs). The rate rule above misses a chain
 * paced by the agent's own answers (each dialog opens only once the one before is answered,
 * slower than `LOOP_DIALOGS` per window), which otherwise keeps the session answering
 * forever. A page that asks a handful of questions in a row stays far below 20; past it,
 * each answer only buys the next dialog.
 */
export const CHAIN_DIALOGS = 20;
/** Characters of a dialog's message kept (page text: shown inside an untrusted block). */
const MAX_MESSAGE = 500;

/** A dialog waiting for an answer. */
export interface OpenDialog {
  /** Target id of the tab whose page (or frame) opened it. */
  tabId: string;
  type: Protocol.Page.DialogType;
  message: string;
  defaultPrompt: string;
  /** URL of the frame that opened it (never shown beyond origin and path). */
  url: string;
  /** The session that must answer it (the frame's own for an out-of-process frame). */
  session: CdpSession;
}

/**
 * Why a tab's dialogs are a loop: `DIALOG_RATE`, `LOOP_DIALOGS` within `LOOP_WINDOW_MS`;
 * `DIALOG_CHAIN`, `CHAIN_DIALOGS` in a row without progress.
 */
export type LoopReason = "DIALOG_RATE" | "DIALOG_CHAIN";

/** A tab caught looping: which, how many dialogs, by which rule. */
export interface DialogLoop {
  tabId: string;
  count: number;
  reason: LoopReason;
}

/** What the session does when a tab loops. */
export type LoopHandler = (loop: DialogLoop) => void;

/**
 * A tab the agent leaves while a dialog is open on it (`Dialogs.leave`). Until `release()`,
 * every dialog that opens on it is answered at once, unseen (a `beforeunload` accepted: the
 * agent asked to leave; any other dismissed), and counted by the loop rules. `stuck` resolves
 * when leaving cannot work: a loop rule tripped, or a dialog could not be answered (Chromium
 * refuses to answer the old page's dialog once a navigation away from it started, and that
 * navigation then waits on the dialog forever): the tab must be closed.
 */
export interface Leave {
  stuck: Promise<LoopReason | "DIALOG_UNANSWERABLE">;
  release(): void;
}

/** How a `Dialogs` counts. */
export interface DialogsOptions {
  /** The clock (default `Date.now`). */
  now?: () => number;
  /**
   * The window of the rate rule (default `LOOP_WINDOW_MS`). A test of the chain rule narrows
   * it: its agent must answer slower than `LOOP_DIALOGS` per window, which at 30 s takes
   * minutes for a chain of `CHAIN_DIALOGS`.
   */
  loopWindowMs?: number;
}

/** Tracks the open dialog of each tab. */
export class Dialogs implements TargetWatcher {
  readonly #onLoop: LoopHandler;
  readonly #now: () => number;
  /** The rate rule's window. */
  readonly loopWindowMs: number;
  #open = new Map<string, OpenDialog>();
  #opened = new Map<string, number[]>();
  /** Dialogs of each tab since the agent's last progress on it (see `CHAIN_DIALOGS`). */
  #chain = new Map<string, number>();
  /** Tabs being left, and how each tells it is stuck. */
  #leaving = new Map<string, (why: LoopReason | "DIALOG_UNANSWERABLE") => void>();
  #loopListeners = new Set<LoopHandler>();
  /** Tabs caught looping: their dialogs are dismissed unseen until the tab is gone. */
  #looping = new Set<string>();
  #listeners = new Set<(d: OpenDialog) => void>();
  /** Open `dismissUnseen()` scopes: while any is, every dialog is dismissed unseen. */
  #dismissing = 0;

  constructor(onLoop: LoopHandler, options: DialogsOptions = {}) {
    this.#onLoop = onLoop;
    this.#now = options.now ?? Date.now;
    this.loopWindowMs = options.loopWindowMs ?? LOOP_WINDOW_MS;
  }

  /** Follows dialogs of pages and frames (subscribes only: nothing to send). */
  watch(target: TrackedTarget): void {
    const type = target.info.type;
    if (type !== "page" && type !== "iframe") return;
    const session = target.session;
    session.on(
      "Page.javascriptDialogOpening",
      (e) => this.#opening(tabOf(target) ?? target.info.targetId, session, e),
    );
    session.on("Page.javascriptDialogClosed", () => {
      const tabId = tabOf(target) ?? target.info.targetId;
      if (this.#open.get(tabId)?.session === session) this.#open.delete(tabId);
    });
    session.onDetach(() => {
      const tabId = tabOf(target) ?? target.info.targetId;
      if (this.#open.get(tabId)?.session === session) this.#open.delete(tabId);
      if (type === "page") {
        this.#looping.delete(tabId);
        this.#opened.delete(tabId);
        this.#chain.delete(tabId);
      }
    });
  }

  /** The dialog open on tab `tabId`, if any. */
  openOn(tabId: string): OpenDialog | undefined {
    return this.#open.get(tabId);
  }

  /**
   * Until the returned function is called, every dialog that opens on any tab is dismissed
   * unseen: a workflow the runtime runs itself (a credential capture) answers no page's
   * dialog, and is not cut short by one.
   */
  dismissUnseen(): () => void {
    this.#dismissing++;
    let open = true;
    return () => {
      if (open) this.#dismissing--;
      open = false;
    };
  }

  /** Calls `listener` for every dialog that opens; returns the unsubscribe function. */
  onOpen(listener: (d: OpenDialog) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls `listener` for every loop caught; returns the unsubscribe function. */
  onLoop(listener: LoopHandler): () => void {
    this.#loopListeners.add(listener);
    return () => this.#loopListeners.delete(listener);
  }

  /**
   * The agent made progress on tab `tabId` (an action other than answering a dialog): its
   * chain of dialogs starts again from none.
   */
  progress(tabId: string): void {
    this.#chain.delete(tabId);
  }

  /**
   * Answers the dialog open on `tabId` (a `beforeunload` accepted, any other dismissed) and
   * keeps answering the tab's dialogs until released (see {@link Leave}).
   */
  leave(tabId: string): Leave {
    let stick!: (why: LoopReason | "DIALOG_UNANSWERABLE") => void;
    const stuck = new Promise<LoopReason | "DIALOG_UNANSWERABLE">((r) => stick = r);
    this.#leaving.set(tabId, stick);
    const d = this.#open.get(tabId);
    if (d) {
      this.#open.delete(tabId);
      this.#answerLeaving(d.session, d.type, stick);
    }
    return {
      stuck,
      release: () => {
        if (this.#leaving.get(tabId) === stick) this.#leaving.delete(tabId);
      },
    };
  }

  #answerLeaving(
    session: CdpSession,
    type: Protocol.Page.DialogType,
    stick: (why: "DIALOG_UNANSWERABLE") => void,
  ): void {
    session.send("Page.handleJavaScriptDialog", { accept: type === "beforeunload" }, {
      timeoutMs: 5_000,
    }).catch(() => stick("DIALOG_UNANSWERABLE"));
  }

  /** Answers the dialog of `tabId`. Resolves once Chromium took the answer. */
  async answer(tabId: string, accept: boolean, promptText?: string): Promise<void> {
    const d = this.#open.get(tabId);
    if (!d) return;
    this.#open.delete(tabId);
    await d.session.send("Page.handleJavaScriptDialog", {
      accept,
      ...(promptText !== undefined && d.type === "prompt" ? { promptText } : {}),
    }, { timeoutMs: 5_000 });
  }

  #opening(tabId: string, session: CdpSession, e: Protocol.Page.JavascriptDialogOpeningEvent) {
    if (this.#looping.has(tabId) || this.#dismissing > 0) {
      session.send("Page.handleJavaScriptDialog", { accept: false }).catch(() => {});
      return;
    }
    const loop = this.#count(tabId);
    const leaving = this.#leaving.get(tabId);
    if (leaving) {
      // The agent is leaving the tab: answered unseen, still counted by the loop rules.
      this.#answerLeaving(session, e.type, leaving);
      if (loop) {
        this.#looping.add(tabId);
        leaving(loop.reason);
      }
      return;
    }
    const dialog: OpenDialog = {
      tabId,
      type: e.type,
      // Redacted before it is cut: a secret straddling the cut would otherwise survive in part.
      message: redactCut(e.message, MAX_MESSAGE),
      defaultPrompt: redactCut(e.defaultPrompt ?? "", MAX_MESSAGE),
      url: e.url,
      session,
    };
    this.#open.set(tabId, dialog);
    if (loop) {
      this.#looping.add(tabId);
      // Dismissed first: a tab cannot close while its renderer waits on a dialog.
      this.answer(tabId, false).catch(() => {});
      this.#onLoop(loop);
      for (const l of [...this.#loopListeners]) l(loop);
      return;
    }
    for (const l of [...this.#listeners]) l(dialog);
  }

  /** Counts a dialog of `tabId` by both rules; the loop it makes, if it makes one. */
  #count(tabId: string): DialogLoop | undefined {
    const now = this.#now();
    const recent = (this.#opened.get(tabId) ?? []).filter((t) => now - t < this.loopWindowMs);
    recent.push(now);
    this.#opened.set(tabId, recent);
    const chain = (this.#chain.get(tabId) ?? 0) + 1;
    this.#chain.set(tabId, chain);
    let loop: DialogLoop | undefined;
    if (recent.length >= LOOP_DIALOGS) {
      loop = { tabId, count: recent.length, reason: "DIALOG_RATE" };
    } else if (chain >= CHAIN_DIALOGS) loop = { tabId, count: chain, reason: "DIALOG_CHAIN" };
    if (loop) {
      this.#opened.delete(tabId);
      this.#chain.delete(tabId);
    }
    return loop;
  }
}
