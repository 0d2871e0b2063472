/**
 * File choosers of every tab. Chromium is told to hand them to the runtime instead of
 * opening a dialog, so a page cannot wait on one; the agent answers with
 * `browser_file_upload` and only files under the operator's upload dir can be chosen.
 *
 * @module
 */
import type { CdpSession, Protocol, TrackedTarget } from "../../cdp/mod.ts";
import type { TargetWatcher } from "./hooks.ts";
import { tabOf } from "./tab_of.ts";

/** A file chooser waiting for files. */
export interface OpenChooser {
  tabId: string;
  /** The session of the frame whose input opened it. */
  session: CdpSession;
  frameId: string;
  backendNodeId: number;
  multiple: boolean;
}

/** Tracks the open file chooser of each tab. */
export class FileChoosers implements TargetWatcher {
  readonly #onOpen: (chooser: OpenChooser) => void;
  #open = new Map<string, OpenChooser>();

  constructor(onOpen: (chooser: OpenChooser) => void) {
    this.#onOpen = onOpen;
  }

  /** Intercepts choosers of pages and frames (sent before the target runs). */
  watch(target: TrackedTarget): Promise<void> | void {
    const type = target.info.type;
    if (type !== "page" && type !== "iframe") return;
    const session = target.session;
    session.on("Page.fileChooserOpened", (e) => this.#opened(target, session, e));
    session.onDetach(() => {
      for (const [tab, c] of this.#open) if (c.session === session) this.#open.delete(tab);
    });
    return session.send("Page.setInterceptFileChooserDialog", { enabled: true }).then(() => {});
  }

  /** The chooser open on tab `tabId`, if any. */
  openOn(tabId: string): OpenChooser | undefined {
    return this.#open.get(tabId);
  }

  /** Forgets the chooser of `tabId` (it was answered). */
  close(tabId: string): void {
    this.#open.delete(tabId);
  }

  #opened(target: TrackedTarget, session: CdpSession, e: Protocol.Page.FileChooserOpenedEvent) {
    // A chooser with no input behind it cannot be filled through DOM.setFileInputFiles.
    if (e.backendNodeId === undefined) return;
    const chooser: OpenChooser = {
      tabId: tabOf(target) ?? target.info.targetId,
      session,
      frameId: e.frameId,
      backendNodeId: e.backendNodeId,
      multiple: e.mode === "selectMultiple",
    };
    this.#open.set(chooser.tabId, chooser);
    this.#onOpen(chooser);
  }
}
