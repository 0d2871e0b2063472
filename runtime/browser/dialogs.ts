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
/** The window of the loop rule. */
export const LOOP_WINDOW_MS = 30_000;
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

/** What the session does when a tab loops. */
export type LoopHandler = (tabId: string, count: number) => void;

/** Tracks the open dialog of each tab. */
export class Dialogs implements TargetWatcher {
  readonly #onLoop: LoopHandler;
  readonly #now: () => number;
  #open = new Map<string, OpenDialog>();
  #opened = new Map<string, number[]>();
  /** Tabs caught looping: their dialogs are dismissed unseen until the tab is gone. */
  #looping = new Set<string>();
  #listeners = new Set<(d: OpenDialog) => void>();
  /** Open `dismissUnseen()` scopes: while any is, every dialog is dismissed unseen. */
  #dismissing = 0;

  constructor(onLoop: LoopHandler, now: () => number = Date.now) {
    this.#onLoop = onLoop;
    this.#now = now;
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
      if (type === "page") this.#looping.delete(tabId);
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
    const now = this.#now();
    const recent = (this.#opened.get(tabId) ?? []).filter((t) => now - t < LOOP_WINDOW_MS);
    recent.push(now);
    this.#opened.set(tabId, recent);
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
    if (recent.length >= LOOP_DIALOGS) {
      this.#opened.delete(tabId);
      this.#looping.add(tabId);
      // Dismissed first: a tab cannot close while its renderer waits on a dialog.
      this.answer(tabId, false).catch(() => {});
      this.#onLoop(tabId, recent.length);
      return;
    }
    for (const l of [...this.#listeners]) l(dialog);
  }
}
