/**
 * Reading mode's extraction: Mozilla's Readability, run by the runtime inside the tab's main
 * frame in an isolated world of its own, on a copy of the document that holds only what the
 * visibility rule shows (`visibility.ts`, as the outline shows it). The page's scripts never
 * see the library or its result, and what they did to their own world (a patched
 * `cloneNode`, a `textContent` getter, a global `Readability`) cannot reach it: an isolated
 * world shares the DOM but has pristine prototypes and globals. The model never runs it.
 *
 * What comes back is bounded in the page ({@link MAX_READ_CHARS}): a page of 50 MB of text
 * costs the runtime at most that much, and the result says when it was cut.
 *
 * @module
 */
// The library's own file, as text: injected into the isolated world, never run here. A
// static import needs no read permission and is part of a compiled binary's module graph.
import READABILITY_SOURCE from "@mozilla/readability/Readability.js" with { type: "text" };
import READERABLE_SOURCE from "@mozilla/readability/Readability-readerable.js" with {
  type: "text",
};
import { CdpError, type CdpSession } from "../../cdp/mod.ts";
import { CUT_READ_MARGIN } from "../redact/mod.ts";
import { IN_PAGE_PRUNED_COPY } from "../snapshot/mod.ts";

/** Characters of article text the isolated world returns at most (all lines together). */
export const MAX_READ_CHARS = 2_000_000;
/** Characters of the article's title shown (after redaction). */
export const MAX_TITLE_CHARS = 1_000;
/**
 * Characters of the title the page returns: what `redactClip()` reads of a string it cuts
 * to {@link MAX_TITLE_CHARS}, so a secret straddling the page's cut is never shown.
 */
const TITLE_READ_CHARS = MAX_TITLE_CHARS * 4 + CUT_READ_MARGIN;
/**
 * How long the extraction may run in the renderer before Chromium stops it: a page built to
 * make Readability slow gets the fallback, not a wedged call.
 */
export const READ_TIMEOUT_MS = 10_000;
/**
 * Elements Readability reads at most (its `maxElemsToParse`): past it, the page is no
 * article worth the renderer's time.
 */
export const MAX_READ_ELEMENTS = 200_000;

/**
 * Characters below which an extract counts as an article only when Readability's own check
 * (`isProbablyReaderable`, Firefox's reader-view test) says the page reads as one: its
 * default `charThreshold`.
 */
export const MIN_ARTICLE_CHARS = 500;

/** Links the isolated world reports at most (in reading order). */
export const MAX_ARTICLE_LINKS = 500;
/**
 * The attribute the reading pass sets on each copied link (a nonce and its live element's
 * index): it outlives Readability's re-parse of the copy, where node identity does not.
 */
const LINK_MARK = "data-omotai-read-link";
/** Characters of a link's URL the isolated world reports. */
const LINK_URL_CHARS = 4_096;

/** A link in the article's text: the line it ends in, its URL, its element. */
export interface ArticleLink {
  /** Index into {@link Article.lines}. */
  line: number;
  /** Its absolute URL (never shown: it tells a link within the page itself). */
  href: string;
  /**
   * Index of its live element among the handles the reading pass took (the same pass that
   * copied the document, so no page script ran in between); -1 when it has none.
   */
  element: number;
  /** The live element's backend node id, when it was found. */
  backendNodeId?: number;
}

/** The main text of a page, as plain lines (`# heading`, paragraphs, `- item`). */
export interface Article {
  /** The article's title (Readability's), or the document's; not yet redacted or cut. */
  title: string;
  /** Paragraphs, headings and list items in reading order, not yet redacted. */
  lines: string[];
  /** The links in the text, in reading order (at most {@link MAX_ARTICLE_LINKS}). */
  links: ArticleLink[];
  /** Whether the text stopped at {@link MAX_READ_CHARS}. */
  cut: boolean;
}

/** Why no article came back. */
export type NoArticle = "none" | "failed";

const WORLD = "omotai-read";

// Runs in the isolated world after the library's source. The document is copied as the
// visibility rule shows it (visibility.ts: computed style of the live elements, so text a
// class hides is left out as the outline leaves it out), and each copied link keeps its
// live element, taken in that same synchronous pass: no page script runs between the copy
// and the handle, so a page inserting links cannot make one link's line another's.
// Readability hands back its article element (`serializer`) and this walk turns it into
// lines: headings as `#` lines, list items as `- ` lines, table cells joined with ` | `,
// links as their text, each also reported with the line it ends in, its URL and the index
// of its live element among `nodes` (the runtime gives it the outline's ref). String.raw:
// the regexps' backslashes reach the page as written.
const EXTRACT = String
  .raw`function (Readability, isProbablyReaderable, prunedCopy, max, titleMax, maxElems, minText,
    maxLinks, linkUrl, mark) {
  const pruned = prunedCopy(document);
  if (!pruned) return { value: { none: true }, nodes: [] };
  const { copy, twins } = pruned;
  // Each copied link is marked with its live element's index before Readability runs:
  // Readability may rebuild its tree from HTML (an attempt under its character threshold
  // starts over from the saved markup, so every node it returns is new), and a mark in an
  // attribute survives that where a Map keyed by node does not. The mark holds a nonce made
  // here, and any attribute of its name the page set is stripped from the copy first: no
  // page markup, in the copy or re-parsed from its text, can name another link's element.
  const nonce = Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36))
    .join("");
  for (const el of copy.querySelectorAll("[" + mark + "]")) {
    while (el.hasAttribute(mark)) el.removeAttribute(mark);
  }
  const lives = [];
  for (const [copied, live] of twins) {
    copied.setAttribute(mark, nonce + ":" + lives.length);
    lives.push(live);
  }
  // The live element of a copied link, each at most once (a page cannot make one link's
  // element another's line by repeating it); none for a link without a mark of this read.
  const bound = new Set();
  const liveOf = (a) => {
    const m = a.getAttribute(mark);
    if (m === null || !m.startsWith(nonce + ":")) return undefined;
    const rest = m.slice(nonce.length + 1);
    if (!/^[0-9]{1,9}$/.test(rest)) return undefined;
    const i = Number(rest);
    if (i >= lives.length || bound.has(i)) return undefined;
    bound.add(i);
    return lives[i];
  };
  // A second copy of the pruned one (ours: no page script can touch it) for the marked
  // article and Readability's own check, since Readability takes the first apart. Its links
  // carry the first's marks.
  const spare = copy.cloneNode(true);
  const nodes = [];
  const parsed = new Readability(copy, {
    serializer: (el) => el,
    maxElemsToParse: maxElems,
  }).parse();
  // Readability returns its best guess for almost any page; a short one on a page Firefox
  // would offer no reader view for (a form, a menu) is no article. A page that marks its one
  // article, or its main region, says where its text is: that is read instead (a docs page's
  // short entry under a long sidebar), its navigation, asides, header and footer left out.
  let root = parsed && parsed.content &&
      ((parsed.length || 0) >= minText || isProbablyReaderable(spare))
    ? parsed.content
    : null;
  let marked = false;
  if (!root) {
    const articles = spare.querySelectorAll("article");
    root = articles.length === 1
      ? articles[0]
      : spare.querySelector("main, [role=main]");
    marked = root !== null;
  }
  if (!root) return { value: { none: true }, nodes };
  const SKIP = new Set(["script", "style", "noscript", "template", "svg", "math", "button",
    "input", "select", "textarea", "iframe", "object", "embed", "canvas", "video", "audio",
    "img", "picture", "head"]);
  const BLOCK = new Set(["p", "div", "section", "article", "main", "header", "footer", "aside",
    "nav", "ul", "ol", "dl", "dt", "dd", "figure", "figcaption", "details", "summary", "table",
    "thead", "tbody", "tfoot", "tr", "caption", "address", "hr", "form", "fieldset", "center",
    "blockquote"]);
  const MARKED_SKIP = new Set(["nav", "aside", "header", "footer"]);
  const lines = [];
  const links = [];
  let pendingLinks = [];
  let total = 0;
  let cut = false;
  let buf = "";
  let prefix = "";
  const clean = (s) =>
    s.replace(/[\u0000-\u0008\u000e-\u001f\u007f]/g, "").replace(/\s+/g, " ").trim();
  const push = (line) => {
    if (cut) return;
    if (total + line.length + 1 > max) {
      const room = max - total - 1;
      if (room > 0) lines.push(line.slice(0, room));
      total = max;
      cut = true;
      return;
    }
    lines.push(line);
    total += line.length + 1;
  };
  const flush = () => {
    const text = clean(buf);
    buf = "";
    // Lines of bare punctuation carry nothing (as in the outline).
    if (!/[\p{L}\p{N}]/u.test(text)) return;
    push(prefix + text);
    prefix = "";
    // A link belongs to the line its text ended in (one of bare punctuation: the next).
    if (lines.length > 0) {
      for (const l of pendingLinks) links.push({ line: lines.length - 1, ...l });
      pendingLinks = [];
    }
  };
  const add = (text) => {
    buf += text;
    if (buf.length > max) flush();
  };
  const walk = (node, depth) => {
    for (let c = node.firstChild; c && !cut; c = c.nextSibling) {
      if (c.nodeType === 3) {
        add(c.data);
        continue;
      }
      if (c.nodeType !== 1) continue;
      const tag = c.localName;
      if (SKIP.has(tag)) continue;
      // Readability drops a page's chrome itself; a marked region is read without it.
      if (marked && (MARKED_SKIP.has(tag) || c.getAttribute("role") === "navigation")) continue;
      // A page nested beyond any article's depth is read flat rather than overflow the stack.
      if (depth > 400) {
        add(" " + c.textContent + " ");
        continue;
      }
      if (tag === "br") {
        flush();
      } else if (/^h[1-6]$/.test(tag)) {
        flush();
        prefix = "#".repeat(Number(tag[1])) + " ";
        walk(c, depth + 1);
        flush();
        prefix = "";
      } else if (tag === "li") {
        flush();
        prefix = "- ";
        walk(c, depth + 1);
        flush();
        prefix = "";
      } else if (tag === "pre") {
        flush();
        for (const line of c.textContent.split("\n")) {
          if (cut) break;
          buf = line;
          flush();
        }
      } else if (tag === "a" && c.hasAttribute("href")) {
        walk(c, depth + 1);
        if (links.length + pendingLinks.length < maxLinks) {
          const live = liveOf(c);
          if (live) nodes.push(live);
          pendingLinks.push({
            href: String(c.href).slice(0, linkUrl),
            element: live ? nodes.length - 1 : -1,
          });
        }
      } else if (tag === "td" || tag === "th") {
        if (clean(buf)) buf += " | ";
        walk(c, depth + 1);
      } else if (BLOCK.has(tag)) {
        flush();
        walk(c, depth + 1);
        flush();
      } else {
        walk(c, depth + 1);
      }
    }
  };
  walk(root, 0);
  flush();
  if (lines.length === 0) return { value: { none: true }, nodes };
  for (const l of pendingLinks) links.push({ line: lines.length - 1, ...l });
  const title = clean(String((!marked && parsed.title) || document.title || "")).slice(0, titleMax);
  return { value: { title, lines, links, cut }, nodes };
}`;

/**
 * Reads the main text of the document in `frameId` (the tab's main frame), or says why there
 * is none: `none` when Readability finds no article, `failed` when the extraction threw or
 * ran out of time (a hostile or huge page).
 */
export async function readArticle(
  session: CdpSession,
  frameId: string,
): Promise<Article | NoArticle> {
  // A fresh context per read: nothing of an earlier read (or of the page) lingers in it.
  const world = await session.send("Page.createIsolatedWorld", { frameId, worldName: WORLD });
  // The library is declared inside a function, so not even this world's globals keep it.
  const args = [
    MAX_READ_CHARS,
    TITLE_READ_CHARS,
    MAX_READ_ELEMENTS,
    MIN_ARTICLE_CHARS,
    MAX_ARTICLE_LINKS,
    LINK_URL_CHARS,
    JSON.stringify(LINK_MARK),
  ].join(", ");
  const expression = `(() => {\n${READABILITY_SOURCE}\n;\n${READERABLE_SOURCE}\n;` +
    `return (${EXTRACT})(Readability, isProbablyReaderable, ${IN_PAGE_PRUNED_COPY}, ${args});\n})()`;
  // The answer stays in the page until read: its links' elements are handles, not places.
  const group = "omotai-read";
  try {
    const res = await session.send("Runtime.evaluate", {
      expression,
      contextId: world.executionContextId,
      objectGroup: group,
      timeout: READ_TIMEOUT_MS,
    }, { timeoutMs: READ_TIMEOUT_MS + 5_000 });
    const answer = res.result.objectId;
    if (res.exceptionDetails || !answer) return "failed";
    const value = await session.send("Runtime.callFunctionOn", {
      functionDeclaration: "function () { return this.value; }",
      objectId: answer,
      returnByValue: true,
    });
    const article = articleOf(value.result.value);
    if (typeof article === "object") await bindElements(session, answer, article);
    return article;
  } catch (err) {
    // Chromium stopped the reader at its timeout ("Execution was terminated"), or the
    // document went under it: no article this time. A renderer that does not answer at all
    // is the caller's timeout, as for any other call.
    if (err instanceof CdpError) return "failed";
    throw err;
  } finally {
    await session.send("Runtime.releaseObjectGroup", { objectGroup: group }).catch(() => {});
  }
}

/**
 * Sets each article link's `backendNodeId`: that of the live element the reading pass took
 * for it (its `nodes`), described by handle, so whatever the page did since (links inserted
 * before it, the link moved or removed) the id is that element's. A link without a handle
 * keeps none, and reading mode shows it as text only.
 */
async function bindElements(session: CdpSession, answer: string, article: Article) {
  if (!article.links.some((l) => l.element >= 0)) return;
  const list = await session.send("Runtime.callFunctionOn", {
    functionDeclaration: "function () { return this.nodes; }",
    objectId: answer,
  });
  const id = list.result.objectId;
  if (!id) return;
  const props = await session.send("Runtime.getProperties", { objectId: id, ownProperties: true });
  const nodeAt = new Map<number, number>();
  // One describeNode per element, all sent at once: up to MAX_ARTICLE_LINKS round trips
  // one after the other would hold the read for each.
  await Promise.all(props.result.map(async (prop) => {
    const i = Number(prop.name);
    const objectId = prop.value?.objectId;
    if (!Number.isSafeInteger(i) || !objectId || prop.value?.subtype !== "node") return;
    const described = await session.send("DOM.describeNode", { objectId }).catch(() => null);
    if (described) nodeAt.set(i, described.node.backendNodeId);
  }));
  for (const link of article.links) {
    const id = nodeAt.get(link.element);
    if (id !== undefined) link.backendNodeId = id;
  }
}

/**
 * The isolated world's answer checked and bounded again on this side: only strings, at most
 * {@link MAX_READ_CHARS} of them, whatever came back.
 */
export function articleOf(value: unknown): Article | NoArticle {
  if (typeof value !== "object" || value === null) return "failed";
  const v = value as {
    none?: unknown;
    title?: unknown;
    lines?: unknown;
    links?: unknown;
    cut?: unknown;
  };
  if (v.none === true) return "none";
  if (!Array.isArray(v.lines)) return "failed";
  const lines: string[] = [];
  let total = 0;
  let cut = v.cut === true;
  for (const line of v.lines) {
    // Links point into the lines by index: a line of another shape breaks the whole answer.
    if (typeof line !== "string") return "failed";
    if (total + line.length + 1 > MAX_READ_CHARS) {
      cut = true;
      break;
    }
    lines.push(line);
    total += line.length + 1;
  }
  if (lines.length === 0) return "none";
  const title = typeof v.title === "string" ? v.title.slice(0, TITLE_READ_CHARS) : "";
  return { title, lines, links: linksOf(v.links, lines.length), cut };
}

/** The reported links, checked: strings within their bounds, lines that exist, in order. */
function linksOf(value: unknown, lineCount: number): ArticleLink[] {
  if (!Array.isArray(value)) return [];
  const out: ArticleLink[] = [];
  let last = 0;
  for (const l of value.slice(0, MAX_ARTICLE_LINKS)) {
    if (typeof l !== "object" || l === null) continue;
    const { line, href, element } = l as Record<string, unknown>;
    if (!Number.isSafeInteger(line) || typeof href !== "string") continue;
    const n = line as number;
    if (n < last || n >= lineCount) continue;
    last = n;
    out.push({
      line: n,
      href: href.slice(0, LINK_URL_CHARS),
      element: Number.isSafeInteger(element) && (element as number) >= 0 ? element as number : -1,
    });
  }
  return out;
}
