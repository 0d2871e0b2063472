/**
 * Snapshots of a tab and the refs they issue: scans the accessibility trees, numbers
 * documents (`d3`), binds every ref to its document, and resolves a ref back to a live
 * element of the same document (or refuses it as stale).
 *
 * @module
 */
import type { CdpSession, Protocol, TrackedTarget } from "../../cdp/mod.ts";
import { displayUrl } from "../net/mod.ts";
import { StaleRefError } from "../mod.ts";
import {
  articleLinkLines,
  buildAxOutline,
  buildDomOutline,
  mainFrameLines,
  NO_ARTICLE_NOTE,
  type PageView,
  READ_FAILED_NOTE,
  READ_LABEL,
  readingLines,
  type ReadingLink,
  readingNote,
  readPageCall,
  renderCard,
  renderDiff,
  type RenderedPage,
  renderFolded,
  renderPage,
  type TypedValue,
} from "../snapshot/mod.ts";
import { redactClip } from "../redact/mod.ts";
import { MAX_READ_CHARS, MAX_TITLE_CHARS, readArticle } from "./reading.ts";
import { DOM_SNAPSHOT_MIN_NODES, scanTab } from "./scan.ts";
import { FRAME_ANSWER_MS, MAX_SCAN_FRAMES } from "./scan_frames.ts";
import type { Element } from "./element_ops.ts";
import type { Live } from "./live.ts";
import { carryRefs } from "./ref_carry.ts";
import { RefTable } from "./ref_table.ts";

/** A scanned view of a tab plus its count of interactive elements. */
export interface ScannedView {
  view: PageView;
  interactive: number;
  tabId: string;
}

/**
 * Whole pages; only what changed since the agent's last view of the same document (else the
 * page, overview first); or the page card (`page_card.ts`): what changed, or a new page's
 * counts, headings and controls, in a few hundred characters.
 */
export type SnapshotMode = "full" | "changes" | "card";

/** What the agent is sent, and whether it is a diff. */
export interface Presented extends RenderedPage {
  diff: boolean;
}

/** Snapshots and refs of one session. */
export class PageSnapshots {
  readonly #nonce: string;
  #refs = new RefTable();
  #docIds = new Map<string, string>();
  #docSeq = 0;
  /**
   * The last view the agent was sent of each tab (full page or diff), and whether all of
   * it was sent (one page, or a diff): only then may a new document fold lines against it.
   */
  #lastSent = new Map<string, { view: PageView; whole: boolean }>();
  #scanning = 0;

  constructor(nonce: string) {
    this.#nonce = nonce;
  }

  /** Whether a scan holds a renderer right now (the call watch then does not probe). */
  get scanning(): boolean {
    return this.#scanning > 0;
  }

  /**
   * Scans `tab` and issues refs for its elements. A huge tab is read from DOM snapshots:
   * its view says so in a note, as roles, names and text may differ.
   */
  async scan(live: Live, tab: TrackedTarget, pages: TrackedTarget[]): Promise<ScannedView> {
    this.#scanning++;
    try {
      return await this.#scan(live, tab, pages);
    } finally {
      this.#scanning--;
    }
  }

  async #scan(live: Live, tab: TrackedTarget, pages: TrackedTarget[]): Promise<ScannedView> {
    const scan = await scanTab(tab.session, live.tracker);
    const docId = this.#docId(scan.mainLoaderId);
    const firstFresh = this.#refs.nextNumber;
    const issue = (key: string, backendNodeId: number): string => {
      const f = scan.frames.get(key)!;
      return this.#refs.issue({
        sessionId: f.session.id!,
        tabId: tab.info.targetId,
        frameId: f.frameId,
        loaderId: f.loaderId,
        docId,
        backendNodeId,
        mainFrame: key === scan.root.key,
      });
    };
    const outline = scan.mode === "dom-snapshot"
      ? buildDomOutline(scan.root, (frame, id) => issue(frame.key, id))
      : buildAxOutline(scan.root, (frame, id) => issue(frame.key, id));
    const note = outlineNote(
      scan.mode === "dom-snapshot",
      outline.truncated ? outline.lines.length : undefined,
      scan.framesCut,
      scan.framesSilent,
    );
    const { lines, brief, stats } = outline;
    const origin = originLabel(scan.url);
    const seen = this.#lastSent.get(tab.info.targetId);
    if (seen && seen.view.origin === origin) {
      carryRefs(
        seen.view.lines,
        lines,
        brief,
        firstFresh,
        (old, fresh) => this.#refs.adopt(old, fresh),
      );
    }
    const view: PageView = {
      nonce: this.#nonce,
      origin,
      // The origin is on the untrusted-page marker; the path is enough here.
      path: displayUrl(scan.url, scan.url),
      title: scan.title || tab.info.title,
      docId,
      tabIndex: pages.indexOf(tab),
      tabCount: pages.length,
      lines,
      brief,
      ...(note ? { note } : {}),
    };
    return { view, interactive: stats.interactive, tabId: tab.info.targetId };
  }

  /**
   * Renders a scan for the agent and remembers it as the agent's last view of the tab.
   * In `changes` mode a view of the document the agent last saw becomes a diff when that
   * is smaller than the first page; a new document gets a whole first page, folded where
   * it repeats word for word what the agent's last whole view of the tab showed. In `card`
   * mode the card of the view (`near`: the refs the action acted on); the agent saw part of
   * it, as of `browser_find`'s lines: diffs count from it, nothing folds against it.
   */
  present(
    c: ScannedView,
    mode: SnapshotMode,
    page = 1,
    maxTokens?: number,
    typed: readonly TypedValue[] = [],
    near: readonly string[] = [],
  ): Presented {
    const before = this.#lastSent.get(c.tabId);
    if (mode === "card") {
      const text = renderCard({ before: before?.view, after: c.view, near, typed });
      this.#lastSent.set(c.tabId, { view: c.view, whole: false });
      return { text, page: 1, pages: 1, diff: before?.view.docId === c.view.docId };
    }
    const shown = this.#render(c, mode, page, maxTokens, before, typed);
    // A diff shows what changed since a view: the rest is as much seen as it was then.
    const whole = shown.diff ? before?.whole ?? false : shown.pages === 1;
    this.#lastSent.set(c.tabId, { view: c.view, whole });
    return shown;
  }

  /**
   * Remembers a scan the agent was shown only some lines of (`browser_find`) as its last view
   * of the tab, as a later page of a snapshot is: diffs count from it and the refs it showed
   * carry like any shown ref. It folds nothing (the agent did not see it whole) unless it
   * reads line for line like the whole view already sent of the same document.
   */
  shownInPart(c: ScannedView): void {
    const before = this.#lastSent.get(c.tabId);
    const same = before !== undefined && before.whole && before.view.docId === c.view.docId &&
      sameLines(before.view.lines, c.view.lines);
    this.#lastSent.set(c.tabId, { view: c.view, whole: same });
  }

  #render(
    c: ScannedView,
    mode: SnapshotMode,
    page: number,
    maxTokens: number | undefined,
    before: { view: PageView; whole: boolean } | undefined,
    typed: readonly TypedValue[],
  ): Presented {
    if (mode === "changes" && before && page === 1) {
      const text = renderDiff(before.view, c.view, maxTokens, typed);
      if (text !== undefined) return { text, page: 1, pages: 1, diff: true };
      if (before.whole && before.view.docId !== c.view.docId) {
        const folded = renderFolded(before.view, c.view, maxTokens);
        if (folded) return { ...folded, diff: false };
      }
    }
    return { ...renderPage(c.view, page, maxTokens), diff: false };
  }

  /**
   * Reading mode: the main text of the document `tab` shows (Readability, run in an isolated
   * world of its main frame), rendered as page `page` within `maxTokens`. Each link of the
   * text that an outline of the document taken now (`scan`) lists is followed by that outline
   * line, ref and all; that outline counts as shown in part (as `browser_find`'s) and is
   * what the next diff compares with. The reading view itself is no diff base.
   */
  async read(
    tab: TrackedTarget,
    pages: TrackedTarget[],
    scan: () => Promise<ScannedView>,
    page = 1,
    maxTokens?: number,
  ): Promise<RenderedPage & { docId: string; article: boolean }> {
    // The reader holds the renderer like a scan: the call watch's probes would only queue.
    this.#scanning++;
    try {
      const { frameTree } = await frameTreeOf(tab.session);
      const frame = frameTree.frame;
      const docId = this.#docId(frame.loaderId);
      const article = await readArticle(tab.session, frame.id);
      const found = typeof article === "object";
      // The links' lines come from an outline taken now (refs carried as for any scan), not
      // from the agent's last one: the page may have changed its links since.
      let outline: PageView | undefined;
      if (found && article.links.length > 0) {
        const scanned = await scan();
        this.shownInPart(scanned);
        outline = scanned.view;
      }
      const after = found && outline?.docId === docId
        ? articleLinkLines(article.links, this.#lineOfElement(outline.lines), frame.url)
        : undefined;
      const view: PageView = {
        nonce: this.#nonce,
        origin: originLabel(frame.url),
        path: displayUrl(frame.url, frame.url),
        title: redactClip(found && article.title ? article.title : tab.info.title, MAX_TITLE_CHARS),
        docId,
        tabIndex: pages.indexOf(tab),
        tabCount: pages.length,
        lines: found ? readingLines(article.lines, article.cut, undefined, after) : [],
      };
      const note = !found
        ? (article === "none" ? NO_ARTICLE_NOTE : READ_FAILED_NOTE)
        : readingNote(article.cut, MAX_READ_CHARS);
      if (note) view.note = note;
      const shown = renderPage(view, page, maxTokens, {
        pageCall: readPageCall,
        label: READ_LABEL,
        neutralized: true,
      });
      return { ...shown, docId: view.docId, article: found };
    } finally {
      this.#scanning--;
    }
  }

  /**
   * The main-frame line of an outline whose ref is bound to a link's element (by backend
   * node), for reading mode: the very element, never one that reads alike.
   */
  #lineOfElement(outline: readonly string[]): (link: ReadingLink) => string | undefined {
    const byNode = new Map<number, string>();
    for (const [ref, line] of mainFrameLines(outline)) {
      try {
        const target = this.#refs.lookup(`e${ref}`);
        if (target.mainFrame) byNode.set(target.backendNodeId, line);
      } catch {
        // A line of a ref this table never issued: no element to stand for.
      }
    }
    return (link) => link.backendNodeId === undefined ? undefined : byNode.get(link.backendNodeId);
  }

  /**
   * Resolves a ref to a live element of the document `tab` shows now, or throws `STALE_REF`.
   * One frame-tree read of the tab serves the staleness check, the facts (main frame, page
   * URL) and the handler; an out-of-process frame costs one more.
   */
  async resolve(live: Live, tab: TrackedTarget, ref: string): Promise<Element> {
    const target = this.#refs.lookup(ref);
    if (target.tabId !== tab.info.targetId) {
      throw new StaleRefError(
        `ref ${ref} belongs to another tab; select that tab or take a new snapshot`,
      );
    }
    const session = live.browser.connection.session(target.sessionId);
    if (!session) {
      throw new StaleRefError(`ref ${ref} belongs to a frame that is gone; take a new snapshot`);
    }
    const { frameTree } = await frameTreeOf(tab.session);
    const current = this.#docId(frameTree.frame.loaderId);
    const frameLoader = session.id === tab.session.id
      ? loaderIn(frameTree, target.frameId)
      : loaderIn((await frameTreeOf(session)).frameTree, target.frameId);
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
      mainFrame: { id: frameTree.frame.id, url: frameTree.frame.url },
    };
  }

  #docId(loaderId: string): string {
    let id = this.#docIds.get(loaderId);
    if (!id) {
      id = `d${++this.#docSeq}`;
      this.#docIds.set(loaderId, id);
    }
    return id;
  }
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((l, i) => l === b[i]);
}

function frameTreeOf(session: CdpSession): Promise<Protocol.Page.GetFrameTreeResponse> {
  return session.send("Page.getFrameTree", undefined, { timeoutMs: 5_000 });
}

function loaderIn(tree: Protocol.Page.FrameTree, frameId: string): string {
  const stack = [tree];
  while (stack.length > 0) {
    const t = stack.pop()!;
    if (t.frame.id === frameId) return t.frame.loaderId;
    stack.push(...(t.childFrames ?? []));
  }
  return "";
}

/**
 * The runtime's line on a view read from a DOM snapshot, or cut at the outline's budget:
 * counts only, nothing the page wrote.
 */
function outlineNote(
  domSnapshot: boolean,
  cutAt: number | undefined,
  framesCut: boolean,
  framesSilent: boolean,
): string | undefined {
  const lines = cutAt === undefined ? "" : `cut after ${cutAt.toLocaleString("en-US")} lines`;
  // Said whichever way the page was read: the frames past the bound are not in the view.
  const frames = framesCut
    ? `frames past the first ${MAX_SCAN_FRAMES} not read (they are not in this view)`
    : "";
  const silent = framesSilent
    ? `a frame that did not answer in ${FRAME_ANSWER_MS / 1000} s not read (it is not in this view)`
    : "";
  const cut = [lines, frames, silent].filter(Boolean).join("; ");
  if (!domSnapshot) return cut ? `note: page ${cut}` : undefined;
  return `note: large page (over ${
    DOM_SNAPSHOT_MIN_NODES.toLocaleString("en-US")
  } nodes) read from a DOM snapshot, not the accessibility tree: roles, names and text may differ slightly${
    cut ? `; ${cut}` : ""
  }`;
}

/** The origin on the untrusted-page marker: `null` origins show their scheme. */
function originLabel(url: string): string {
  try {
    const u = new URL(url);
    return u.origin === "null" ? u.protocol : u.origin;
  } catch {
    return "unknown";
  }
}
