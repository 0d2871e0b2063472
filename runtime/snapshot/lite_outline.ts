/**
 * The fast-mode outline of a huge page, built from `DOMSnapshot.captureSnapshot` instead of
 * the accessibility tree (which costs Chromium ~50 µs per node, 15 s and more for a page of
 * 60,000 links, while a DOM snapshot of it takes about one second). Same line shapes as
 * `outline.ts` (`[e12] "Item 7" -> /item/7`, `# Heading`, text lines), so paging, the
 * overview pages and diffs work unchanged; roles and names are computed from the DOM
 * (aria-label, labels, text, alt, title, value), so they may differ slightly from the
 * accessibility tree's. Pure: no CDP here, so it is tested on canned snapshots.
 *
 * A hostile page controls the snapshot, so every walk is iterative (no recursion on DOM
 * depth), every name and value is cut before it is normalized, name lookups visit a bounded
 * number of nodes, and the outline stops at a line and character budget.
 *
 * Every page string is redacted before it is shortened (as in `outline.ts`): a giant one
 * is read only as far as its cut can matter plus a margin (`CUT_READ_MARGIN`), so a value
 * straddling the cut is read whole, then redacted, then cut.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import { displayUrl } from "../net/display_url.ts";
import {
  boundedRedact,
  CUT_READ_MARGIN,
  processRedactor,
  redactClip,
  redactCut,
  type Redactor,
} from "../redact/mod.ts";
import {
  ARIA_CONTROL_ROLES,
  BRIEF_TEXT_CHARS,
  linkHead,
  optionsList,
  type OutlineStats,
} from "./outline.ts";

type DocumentSnapshot = Protocol.DOMSnapshot.DocumentSnapshot;
type CaptureSnapshotResponse = Protocol.DOMSnapshot.CaptureSnapshotResponse;

/** The computed styles the capture must request, in this order. */
export const LITE_STYLES: readonly string[] = ["display", "visibility"];

/** One document of a DOM snapshot plus what the outline needs to know about it. */
export interface LiteFrame {
  /** Unique key of the frame (its frame id). */
  readonly key: string;
  /** The frame document's URL. */
  readonly url: string;
  readonly document: DocumentSnapshot;
  /** The string table of the snapshot the document belongs to. */
  readonly strings: readonly string[];
  /**
   * Child frames keyed by the backend id of their owner `<iframe>`: same-process documents
   * of the same snapshot and out-of-process frames captured on their own.
   */
  readonly childFrames: ReadonlyMap<number, LiteFrame>;
}

/** Issues a ref for an element of a frame. */
export type LiteRefIssuer = (frame: LiteFrame, backendNodeId: number) => string;

/** Limits of one fast-mode outline. */
export interface LiteLimits {
  /** Lines kept at most; the rest of the page is left out and `truncated` is set. */
  maxLines: number;
  /** Characters kept at most (all lines together). */
  maxChars: number;
}

/** Defaults: room for far more than 60,000 links, yet bounded for a page built to be huge. */
export const LITE_LIMITS: LiteLimits = { maxLines: 200_000, maxChars: 16_000_000 };

/** A fast-mode outline. */
export interface LiteOutline {
  lines: string[];
  brief: string[];
  stats: OutlineStats;
  /** Whether the outline stopped at its line or character budget. */
  truncated: boolean;
}

/**
 * Turns the documents of one `DOMSnapshot.captureSnapshot` reply into frames. `urlOf` gives
 * the URL of a frame the caller knows (from its frame tree); documents of other frames (one
 * that appeared after the frame tree was read) are left out, as their refs could not be
 * bound. Same-process child documents go into the one `childFrames` map every frame of the
 * snapshot shares (backend ids are unique per renderer), which the caller may extend with
 * out-of-process frames.
 */
export function liteFrames(
  snapshot: CaptureSnapshotResponse,
  urlOf: (frameId: string) => string | undefined,
): { frames: Map<string, LiteFrame>; childFrames: Map<number, LiteFrame> } {
  const childFrames = new Map<number, LiteFrame>();
  const byIndex: (LiteFrame | undefined)[] = snapshot.documents.map((document) => {
    const key = snapshot.strings[document.frameId] ?? "";
    const url = urlOf(key);
    if (!key || url === undefined) return undefined;
    return { key, url, document, strings: snapshot.strings, childFrames };
  });
  const frames = new Map<string, LiteFrame>();
  for (const f of byIndex) if (f) frames.set(f.key, f);
  snapshot.documents.forEach((document) => {
    const owners = document.nodes.contentDocumentIndex;
    const ids = document.nodes.backendNodeId ?? [];
    if (!owners) return;
    owners.index.forEach((node, i) => {
      const child = byIndex[owners.value[i]];
      if (child && ids[node] !== undefined) childFrames.set(ids[node], child);
    });
  });
  return { frames, childFrames };
}

/** The document title of a frame. */
export function liteTitle(frame: LiteFrame): string {
  return frame.strings[frame.document.title] ?? "";
}

/**
 * Builds the fast-mode outline of a frame and its child frames; page strings are redacted
 * with `redactor` (the process's) before anything shortens them.
 */
export function buildLiteOutline(
  root: LiteFrame,
  issueRef: LiteRefIssuer,
  limits: LiteLimits = LITE_LIMITS,
  redactor: Redactor = processRedactor(),
): LiteOutline {
  const out = new LiteWriter(limits, redactor);
  const stats: OutlineStats = { interactive: 0, frames: 0 };
  renderFrame(root, issueRef, out, stats, 0);
  out.flush();
  return { lines: out.lines, brief: out.brief, stats, truncated: out.truncated };
}

// Same limits as the accessibility outline, so lines read the same.
const NAME_MAX = 120;
const VALUE_MAX = 120;
const LINE_MAX = 1_000;
/** Nodes a name, a heading or a select's options may visit: bounds nested-control pages. */
const NAME_VISIT_MAX = 500;
/** A link target longer than this is cut (a line is never split across pages). */
const TARGET_MAX = LINE_MAX;

const ELEMENT = 1;
const TEXT = 3;
const DOCUMENT_FRAGMENT = 11;

/** ARIA roles listed as controls, as the accessibility outline lists them. */
const CONTROL_ROLES = new Set(ARIA_CONTROL_ROLES);
/** Input types and the role Chromium gives them; absent types are text boxes. */
const INPUT_ROLES: Record<string, string> = {
  button: "button",
  submit: "button",
  reset: "button",
  image: "button",
  file: "button",
  checkbox: "checkbox",
  radio: "radio",
  range: "slider",
  number: "spinbutton",
  search: "searchbox",
  color: "ColorWell",
  date: "Date",
  "datetime-local": "DateTime",
  time: "InputTime",
};
/** Input types whose value is not shown (`= "…"`): it is their name, or nothing to read. */
const NO_VALUE_TYPES = new Set([
  "button",
  "submit",
  "reset",
  "image",
  "file",
  "checkbox",
  "radio",
]);
/** Elements whose content is never page text. */
const SKIP_TAGS = new Set([
  "SCRIPT",
  "STYLE",
  "TEMPLATE",
  "NOSCRIPT",
  "HEAD",
  "TITLE",
  "svg",
  "SVG",
  "CANVAS",
  "IMG",
  "VIDEO",
  "AUDIO",
  "OPTION",
  "OPTGROUP",
  "DATALIST",
]);
/** Elements that start and end a line (the accessibility outline's block roles). */
const BLOCK_TAGS = new Set([
  "HTML",
  "BODY",
  "P",
  "LI",
  "UL",
  "OL",
  "DL",
  "DT",
  "DD",
  "TABLE",
  "THEAD",
  "TBODY",
  "TFOOT",
  "TR",
  "CAPTION",
  "BLOCKQUOTE",
  "PRE",
  "SECTION",
  "ARTICLE",
  "NAV",
  "MAIN",
  "HEADER",
  "FOOTER",
  "ASIDE",
  "FORM",
  "FIGURE",
  "FIGCAPTION",
  "ADDRESS",
  "FIELDSET",
  "LEGEND",
  "DETAILS",
  "SUMMARY",
  "DIALOG",
  "HR",
  "MENU",
]);
const CELL_TAGS = new Set(["TD", "TH"]);
const HEADING_TAGS: Record<string, number> = { H1: 1, H2: 2, H3: 3, H4: 4, H5: 5, H6: 6 };

/** Inherited context bits of a node, set by its parent before it is visited. */
const NO_TEXT = 1; // inside a control, a heading or an aria-hidden subtree
const CONTROLS_ONLY = 2; // inside a control or aria-hidden: only controls are listed
const IN_EDITABLE = 4; // inside a contenteditable root

/** Lines and their overview form, within the outline's budget. */
class LiteWriter {
  lines: string[] = [];
  brief: string[] = [];
  truncated = false;
  #limits: LiteLimits;
  #chars = 0;
  #pieces: string[] = [];
  #pending = 0;
  #lastBox = -1;
  #prefix = "";
  readonly #redactor: Redactor;

  constructor(limits: LiteLimits, redactor: Redactor) {
    this.#limits = limits;
    this.#redactor = redactor;
  }

  /** A page string (name, value, heading) redacted, then cut to `max` characters. */
  clip(text: string, max: number): string {
    return redactClip(text, max, this.#redactor);
  }

  /** A page URL as shown (origin and path), redacted, then cut to `TARGET_MAX`. */
  url(url: string, base: string | undefined): string {
    return redactCut(displayUrl(url, base), TARGET_MAX, { redactor: this.#redactor });
  }

  /** Adds text; `box` is its nearest block-level container (text of two boxes gets a space). */
  text(piece: string, box: number): void {
    if (this.truncated) return;
    // A giant text node is cut before normalizing: past the budget it cannot be shown
    // anyway. The margin keeps a value that straddles the budget whole until `flush()`
    // has redacted it.
    const room = this.#limits.maxChars - this.#chars - this.#pending + CUT_READ_MARGIN;
    const cut = piece.length > room + 1;
    const clean =
      (cut ? boundedRedact(piece.slice(0, Math.max(room + 1, 0)), true, this.#redactor) : piece)
        .replace(/\s+/g, " ");
    if (!clean.trim()) {
      if (this.#pieces.length > 0) this.#push(" ");
      return;
    }
    const prev = this.#pieces.at(-1);
    if (
      prev !== undefined && box !== this.#lastBox && !prev.endsWith(" ") && !clean.startsWith(" ")
    ) this.#push(" ");
    this.#push(clean);
    this.#lastBox = box;
  }

  separator(sep: string): void {
    if (this.#pieces.length > 0) this.#push(sep);
  }

  prefixNext(prefix: string): void {
    this.#prefix = prefix;
  }

  /** The number of lines written so far (flushes pending text). */
  mark(): number {
    this.flush();
    return this.lines.length;
  }

  /** Drops lines written after `mark`. */
  rewind(mark: number): void {
    for (let i = mark; i < this.lines.length; i++) this.#chars -= this.lines[i].length + 1;
    this.lines.length = mark;
    this.brief.length = mark;
  }

  line(text: string, brief = text): void {
    this.flush();
    this.#emit(text, brief);
  }

  /** A closing line (`[/frame]`): written even past the budget, so blocks stay balanced. */
  close(text: string): void {
    this.flush();
    this.lines.push(text);
    this.brief.push(text);
    this.#chars += text.length + 1;
  }

  flush(): void {
    // Redacted whole, before the brief cut and the split (as in outline.ts).
    const text = this.#redactor.redact(this.#pieces.join("")).trim();
    this.#pieces = [];
    this.#pending = 0;
    this.#lastBox = -1;
    if (!/[\p{L}\p{N}]/u.test(text)) return;
    const brief = text.length > BRIEF_TEXT_CHARS ? `${text.slice(0, BRIEF_TEXT_CHARS - 1)}…` : text;
    for (let i = 0; i < text.length; i += LINE_MAX) {
      this.#emit(text.slice(i, i + LINE_MAX), i === 0 ? brief : "");
    }
  }

  #push(piece: string): void {
    // Whitespace between inline elements collapses to one space, as the browser shows it.
    const p = piece.startsWith(" ") && this.#pieces.at(-1)?.endsWith(" ") ? piece.slice(1) : piece;
    if (!p) return;
    this.#pieces.push(p);
    this.#pending += p.length;
  }

  #emit(text: string, brief: string): void {
    if (this.truncated) return;
    const line = this.#prefix + text;
    if (
      this.lines.length >= this.#limits.maxLines ||
      this.#chars + line.length + 1 > this.#limits.maxChars
    ) {
      this.truncated = true;
      return;
    }
    this.lines.push(line);
    this.brief.push(brief && this.#prefix + brief);
    this.#chars += line.length + 1;
    this.#prefix = "";
  }
}

/** Index-based views of one document snapshot. */
class Doc {
  readonly n: number;
  readonly strings: readonly string[];
  readonly nodes: Protocol.DOMSnapshot.NodeTreeSnapshot;
  readonly #nodeName: number[];
  readonly #nodeType: number[];
  readonly #attrs: number[][];
  /** Children of node i are childList[childStart[i] .. childStart[i + 1]), in document order. */
  readonly childStart: Int32Array;
  readonly childList: Int32Array;
  readonly #layout: Int32Array;
  readonly #styles: number[][];
  readonly #inputValue: Map<number, number>;
  readonly #textValue: Map<number, number>;
  readonly #checked: Set<number>;
  readonly #selected: Set<number>;
  readonly #pseudo: Set<number>;
  readonly #userAgentRoots: Set<number>;
  #ids: Map<string, number> | undefined;
  #labelsFor: Map<string, number> | undefined;

  constructor(document: DocumentSnapshot, strings: readonly string[]) {
    const nodes = document.nodes;
    this.nodes = nodes;
    this.strings = strings;
    const parents = nodes.parentIndex ?? [];
    const n = parents.length;
    this.n = n;
    this.#nodeName = nodes.nodeName ?? [];
    this.#nodeType = nodes.nodeType ?? [];
    this.#attrs = nodes.attributes ?? [];
    // Children in compressed form: two passes over parentIndex, no per-node arrays.
    const counts = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const p = parents[i];
      if (p >= 0 && p < n && p !== i) counts[p + 1]++;
    }
    for (let i = 0; i < n; i++) counts[i + 1] += counts[i];
    const childList = new Int32Array(n);
    const fill = counts.slice(0, n);
    for (let i = 0; i < n; i++) {
      const p = parents[i];
      if (p >= 0 && p < n && p !== i) childList[fill[p]++] = i;
    }
    this.childStart = counts;
    this.childList = childList;
    this.#layout = new Int32Array(n).fill(-1);
    const layoutNodes = document.layout?.nodeIndex ?? [];
    for (let li = 0; li < layoutNodes.length; li++) {
      const ni = layoutNodes[li];
      if (ni >= 0 && ni < n && this.#layout[ni] < 0) this.#layout[ni] = li;
    }
    this.#styles = document.layout?.styles ?? [];
    this.#inputValue = rareStrings(nodes.inputValue);
    this.#textValue = rareStrings(nodes.textValue);
    this.#checked = new Set(nodes.inputChecked?.index ?? []);
    this.#selected = new Set(nodes.optionSelected?.index ?? []);
    this.#pseudo = new Set(nodes.pseudoType?.index ?? []);
    this.#userAgentRoots = new Set<number>();
    const roots = nodes.shadowRootType;
    roots?.index.forEach((node, i) => {
      if (strings[roots.value[i]] === "user-agent") this.#userAgentRoots.add(node);
    });
  }

  type(i: number): number {
    return this.#nodeType[i] ?? 0;
  }

  /** Upper-case tag of an HTML element (SVG names keep their case). */
  tag(i: number): string {
    return this.strings[this.#nodeName[i]] ?? "";
  }

  value(i: number): string {
    return this.strings[this.nodes.nodeValue?.[i] ?? -1] ?? "";
  }

  backendId(i: number): number | undefined {
    return this.nodes.backendNodeId?.[i];
  }

  /** An attribute's value; `name` is lower-case, as the HTML parser stores names. */
  attr(i: number, name: string): string | undefined {
    const a = this.#attrs[i];
    if (!a) return undefined;
    for (let k = 0; k + 1 < a.length; k += 2) {
      if (this.strings[a[k]] === name) return this.strings[a[k + 1]] ?? "";
    }
    return undefined;
  }

  /** Whether the node is rendered: it has a layout object and is not `visibility:hidden`. */
  visible(i: number): boolean {
    const li = this.#layout[i];
    if (li < 0) return false;
    const v = this.#style(li, 1);
    return v !== "hidden" && v !== "collapse";
  }

  /** The node's computed `display` (empty when it has no layout object). */
  display(i: number): string {
    const li = this.#layout[i];
    return li < 0 ? "" : this.#style(li, 0);
  }

  /** Nodes never walked: pseudo-elements and the browser's own shadow trees. */
  skipped(i: number): boolean {
    return this.#pseudo.has(i) || this.#userAgentRoots.has(i);
  }

  inputValue(i: number): string | undefined {
    const s = this.#inputValue.get(i);
    return s === undefined ? undefined : this.strings[s];
  }

  textValue(i: number): string | undefined {
    const s = this.#textValue.get(i);
    return s === undefined ? undefined : this.strings[s];
  }

  checked(i: number): boolean {
    return this.#checked.has(i);
  }

  selected(i: number): boolean {
    return this.#selected.has(i);
  }

  /** The element with this id (first in document order), for `aria-labelledby`. */
  byId(id: string): number | undefined {
    if (!this.#ids) {
      this.#ids = new Map();
      for (let i = 0; i < this.n; i++) {
        const v = this.type(i) === ELEMENT ? this.attr(i, "id") : undefined;
        if (v && !this.#ids.has(v)) this.#ids.set(v, i);
      }
    }
    return this.#ids.get(id);
  }

  /** The `<label for=id>` naming the element with this id. */
  labelFor(id: string): number | undefined {
    if (!this.#labelsFor) {
      this.#labelsFor = new Map();
      for (let i = 0; i < this.n; i++) {
        if (this.type(i) !== ELEMENT || this.tag(i) !== "LABEL") continue;
        const v = this.attr(i, "for");
        if (v && !this.#labelsFor.has(v)) this.#labelsFor.set(v, i);
      }
    }
    return this.#labelsFor.get(id);
  }

  #style(li: number, which: number): string {
    return this.strings[this.#styles[li]?.[which] ?? -1] ?? "";
  }
}

function rareStrings(data: Protocol.DOMSnapshot.RareStringData | undefined): Map<number, number> {
  const map = new Map<number, number>();
  data?.index.forEach((node, i) => map.set(node, data.value[i]));
  return map;
}

/** What a node is for the outline. */
interface Control {
  role: string;
  isPassword: boolean;
}

function renderFrame(
  frame: LiteFrame,
  issueRef: LiteRefIssuer,
  out: LiteWriter,
  stats: OutlineStats,
  depth: number,
): void {
  const doc = new Doc(frame.document, frame.strings);
  if (doc.n === 0) return;
  stats.frames++;
  const flags = new Uint8Array(doc.n);
  // The nearest block-level container of each node, for spacing text of different boxes.
  const box = new Int32Array(doc.n).fill(-1);
  // The nearest <label> ancestor of each node, which names the control inside it.
  const label = new Int32Array(doc.n).fill(-1);
  // A stack of node indexes; ~i (negative) closes node i after its children.
  const stack: number[] = [];
  for (let i = 0; i < doc.n; i++) {
    if ((frame.document.nodes.parentIndex?.[i] ?? -1) < 0) pushChildren(i);
  }

  function pushChildren(i: number): void {
    const f = flags[i];
    const b = box[i];
    const l = label[i];
    for (let k = doc.childStart[i + 1] - 1; k >= doc.childStart[i]; k--) {
      const c = doc.childList[k];
      flags[c] = f;
      box[c] = b;
      label[c] = l;
      stack.push(c);
    }
  }

  while (stack.length > 0 && !out.truncated) {
    const x = stack.pop()!;
    if (x < 0) {
      out.flush();
      continue;
    }
    const type = doc.type(x);
    if (doc.skipped(x)) continue;
    if (type === TEXT) {
      if (!(flags[x] & NO_TEXT) && doc.visible(x)) out.text(doc.value(x), box[x]);
      continue;
    }
    if (type === DOCUMENT_FRAGMENT) {
      pushChildren(x);
      continue;
    }
    if (type !== ELEMENT) continue;
    const tag = doc.tag(x);
    if (SKIP_TAGS.has(tag)) continue;
    const visible = doc.visible(x);
    const id = doc.backendId(x);
    if (tag === "BR") {
      if (visible) out.flush();
      continue;
    }
    const child = id !== undefined ? frame.childFrames.get(id) : undefined;
    if (child || tag === "IFRAME" || tag === "FRAME") {
      // A frame that failed to load shows Chromium's error page: not page content.
      if (!child || !visible || depth > 8 || child.url.startsWith("chrome-error:")) continue;
      const mark = out.mark();
      out.line(`[frame ${out.url(child.url, undefined)}]`);
      if (out.lines.length === mark) break; // the budget ended before the frame
      renderFrame(child, issueRef, out, stats, depth + 1);
      // Frames with nothing to show (error pages, empty ads) cost lines and say nothing.
      if (out.mark() === mark + 1) out.rewind(mark);
      else out.close(`[/frame]`);
      continue;
    }
    if (tag === "LABEL") {
      label[x] = x;
      if (labelsCheckable(doc, x)) flags[x] |= NO_TEXT;
    }
    if (doc.attr(x, "aria-hidden")?.trim().toLowerCase() === "true") {
      // Text under aria-hidden is not page content, but its visible controls are clickable.
      flags[x] |= NO_TEXT | CONTROLS_ONLY;
    }
    const control = visible ? controlOf(doc, x, tag, flags[x]) : undefined;
    if (control && id !== undefined) {
      stats.interactive++;
      const ref = issueRef(frame, id);
      out.line(...controlLine(doc, frame, x, tag, control, ref, label[x], out));
      // Controls speak through their name; only nested controls are listed.
      flags[x] |= NO_TEXT | CONTROLS_ONLY;
      if (control.role === "editable") flags[x] |= IN_EDITABLE;
      pushChildren(x);
      continue;
    }
    if (isEditableRoot(doc, x)) flags[x] |= IN_EDITABLE;
    const level = visible && !(flags[x] & CONTROLS_ONLY) ? headingLevel(doc, x, tag) : 0;
    if (level > 0) {
      // Read past the cut, so a value straddling it is redacted whole.
      const name = out.clip(nameFromContent(doc, x, LINE_MAX + CUT_READ_MARGIN), LINE_MAX);
      out.flush();
      if (name) out.line(`${"#".repeat(level)} ${name}`);
      flags[x] |= NO_TEXT;
      stack.push(~x);
      pushChildren(x);
      continue;
    }
    if (CELL_TAGS.has(tag) && visible) out.separator(" | ");
    const display = doc.display(x);
    if (BLOCK_TAGS.has(tag) && visible) {
      out.flush();
      if (tag === "LI") out.prefixNext("- ");
      stack.push(~x);
    } else if (display !== "" && !display.startsWith("inline") && display !== "contents") {
      // A block-level box that is not a block in the accessibility outline (a div) only
      // keeps its text apart from its neighbours' by a space.
      box[x] = x;
    }
    pushChildren(x);
  }
}

function controlOf(doc: Doc, i: number, tag: string, flags: number): Control | undefined {
  const role = (doc.attr(i, "role") ?? "").trim().toLowerCase().split(/\s+/)[0];
  const type = (doc.attr(i, "type") ?? "").trim().toLowerCase();
  // The same test as the accessibility path's (`isPasswordInput`): never show its value.
  const isPassword = tag === "INPUT" && type === "password";
  if (isPassword) return { role: "password", isPassword };
  if (CONTROL_ROLES.has(role)) return { role, isPassword };
  if ((tag === "A" || tag === "AREA") && doc.attr(i, "href") !== undefined) {
    return tag === "A" ? { role: "link", isPassword } : undefined;
  }
  if (tag === "BUTTON") return { role: "button", isPassword };
  if (tag === "INPUT") {
    if (type === "hidden") return undefined;
    return { role: INPUT_ROLES[type] ?? "textbox", isPassword };
  }
  if (tag === "SELECT") {
    const size = Number(doc.attr(i, "size") ?? "0");
    return {
      role: doc.attr(i, "multiple") !== undefined || size > 1 ? "listbox" : "combobox",
      isPassword,
    };
  }
  if (tag === "TEXTAREA") return { role: "textbox", isPassword };
  if (!(flags & IN_EDITABLE) && isEditableRoot(doc, i)) return { role: "editable", isPassword };
  return undefined;
}

function isEditableRoot(doc: Doc, i: number): boolean {
  const v = doc.attr(i, "contenteditable");
  return v !== undefined && v.trim().toLowerCase() !== "false";
}

function headingLevel(doc: Doc, i: number, tag: string): number {
  const role = (doc.attr(i, "role") ?? "").trim().toLowerCase();
  const native = HEADING_TAGS[tag];
  if (role === "heading" || (native && (role === "" || role === "heading"))) {
    const level = Number(doc.attr(i, "aria-level") ?? native ?? 2);
    return Number.isFinite(level) ? Math.min(Math.max(Math.trunc(level), 1), 6) : 2;
  }
  return 0;
}

function controlLine(
  doc: Doc,
  frame: LiteFrame,
  i: number,
  tag: string,
  control: Control,
  ref: string,
  labelAncestor: number,
  out: LiteWriter,
): [full: string, brief: string] {
  const { role, isPassword } = control;
  const name = out.clip(nameOf(doc, i, tag, labelAncestor), NAME_MAX);
  const head = `[${ref}] ${role}${name ? ` ${JSON.stringify(name)}` : ""}`;
  let target = "";
  let briefTarget = "";
  if (role === "link") {
    const href = doc.attr(i, "href");
    const url = href !== undefined
      ? resolveUrl(href, doc.strings[frame.document.baseURL], frame.url)
      : "";
    if (url) {
      const shown = out.url(url, frame.url);
      target = ` -> ${shown}`;
      // The overview names only foreign origins; paths are on the full pages.
      if (!shown.startsWith("/")) {
        briefTarget = ` -> ${shown.replace(/^(https?:\/\/[^/]+).*$/, "$1")}`;
      }
    }
  }
  let line = "";
  if (tag === "SELECT") {
    const options = optionsOf(doc, i, out);
    const selected = options.filter((o) => o.selected).map((o) => o.name);
    if (role === "combobox" && selected.length > 0) {
      line += ` = ${JSON.stringify(selected[0])}`;
    } else if (selected.length > 0) {
      line += ` = ${selected.map((s) => JSON.stringify(s)).join(", ")}`;
    }
    line += optionsList(options.map((o) => o.name));
  } else if (!isPassword) {
    // A password's value is never read, not even its length.
    const type = (doc.attr(i, "type") ?? "").trim().toLowerCase();
    const value = tag === "TEXTAREA"
      ? doc.textValue(i)
      : tag === "INPUT" && !NO_VALUE_TYPES.has(type)
      ? doc.inputValue(i) ?? doc.attr(i, "value")
      : role === "editable"
      ? nameFromContent(doc, i, VALUE_MAX * 2)
      : undefined;
    if (value) {
      const shown = out.clip(value, VALUE_MAX);
      if (shown) line += ` = ${JSON.stringify(shown)}`;
    }
  }
  const checked = tag === "INPUT" && (role === "checkbox" || role === "radio" || role === "switch")
    ? (doc.checked(i) ? "true" : "false")
    : (doc.attr(i, "aria-checked") ?? doc.attr(i, "aria-pressed") ?? "").trim().toLowerCase();
  if (checked === "true") line += " [checked]";
  if (checked === "mixed") line += " [mixed]";
  if (role === "tab" && doc.attr(i, "aria-selected")?.trim().toLowerCase() === "true") {
    line += " [selected]";
  }
  if (doc.attr(i, "aria-expanded")?.trim().toLowerCase() === "true") line += " [expanded]";
  const nativeDisabled = ["BUTTON", "INPUT", "SELECT", "TEXTAREA"].includes(tag) &&
    doc.attr(i, "disabled") !== undefined;
  if (nativeDisabled || doc.attr(i, "aria-disabled")?.trim().toLowerCase() === "true") {
    line += " [disabled]";
  }
  // As in outline.ts: a link's arrow says what it is.
  const full = target ? linkHead(ref, name) : head;
  return [full + target + line, head + briefTarget + line];
}

/** The accessible name, computed the short way: ARIA, labels, content, then attributes. */
function nameOf(doc: Doc, i: number, tag: string, labelAncestor: number): string {
  const labelledBy = doc.attr(i, "aria-labelledby");
  if (labelledBy) {
    const parts = cut(labelledBy, 1_000).trim().split(/\s+/).slice(0, 8).flatMap((id) => {
      const el = doc.byId(id);
      return el === undefined ? [] : [nameFromContent(doc, el, NAME_MAX * 2, false)];
    });
    const joined = parts.join(" ").trim();
    if (joined) return joined;
  }
  const aria = doc.attr(i, "aria-label");
  if (aria?.trim()) return aria;
  const type = (doc.attr(i, "type") ?? "").trim().toLowerCase();
  const field = tag === "SELECT" || tag === "TEXTAREA" ||
    (tag === "INPUT" && INPUT_ROLES[type] !== "button");
  if (field) {
    const id = doc.attr(i, "id");
    const forLabel = id ? doc.labelFor(id) : undefined;
    const lab = forLabel ?? (labelAncestor >= 0 ? labelAncestor : undefined);
    if (lab !== undefined) {
      const text = nameFromContent(doc, lab, NAME_MAX * 2);
      if (text.trim()) return text;
    }
    return doc.attr(i, "title") ?? doc.attr(i, "placeholder") ?? "";
  }
  if (tag === "INPUT") {
    if (type === "image") return doc.attr(i, "alt") ?? doc.attr(i, "value") ?? "Submit";
    if (type === "file") return doc.attr(i, "title") ?? "";
    const value = doc.attr(i, "value");
    if (value !== undefined) return value;
    return type === "submit" ? "Submit" : type === "reset" ? "Reset" : doc.attr(i, "title") ?? "";
  }
  // A rich-text region is not named by its content: that is its value.
  const text = isEditableRoot(doc, i) ? "" : nameFromContent(doc, i, NAME_MAX * 2);
  if (text.trim()) return text;
  return doc.attr(i, "title") ?? "";
}

/**
 * Whether a `<label>` is for a checkbox or radio button: its text is then the control's
 * name, and the accessibility tree (so this outline) does not show it a second time.
 */
function labelsCheckable(doc: Doc, label: number): boolean {
  const checkable = (x: number) =>
    doc.tag(x) === "INPUT" &&
    ["checkbox", "radio"].includes((doc.attr(x, "type") ?? "").trim().toLowerCase());
  const target = doc.attr(label, "for");
  if (target) {
    const x = doc.byId(target);
    return x !== undefined && checkable(x);
  }
  let visits = 0;
  const stack: number[] = [];
  pushKids(doc, label, stack);
  while (stack.length > 0 && visits++ < NAME_VISIT_MAX) {
    const x = stack.pop()!;
    if (doc.type(x) !== ELEMENT) continue;
    if (checkable(x)) return true;
    pushKids(doc, x, stack);
  }
  return false;
}

/** Pushes the children of `i` so that they pop in document order. */
function pushKids(doc: Doc, i: number, stack: number[]): void {
  for (let k = doc.childStart[i + 1] - 1; k >= doc.childStart[i]; k--) stack.push(doc.childList[k]);
}

/**
 * The visible text under a node (image alt texts included), at most `max` characters and
 * `NAME_VISIT_MAX` nodes visited. `rendered` false reads hidden text too (`aria-labelledby`
 * may name an element that is not shown).
 */
function nameFromContent(doc: Doc, i: number, max: number, rendered = true): string {
  const parts: string[] = [];
  let size = 0;
  let visits = 0;
  const stack: number[] = [];
  pushKids(doc, i, stack);
  while (stack.length > 0 && size < max && visits++ < NAME_VISIT_MAX) {
    const x = stack.pop()!;
    if (doc.skipped(x)) continue;
    const type = doc.type(x);
    if (type === TEXT) {
      if (rendered && !doc.visible(x)) continue;
      const v = cut(doc.value(x), max - size);
      parts.push(v);
      size += v.length;
      continue;
    }
    if (type === ELEMENT) {
      const tag = doc.tag(x);
      if (tag === "IMG") {
        const alt = doc.attr(x, "alt");
        if (alt && (!rendered || doc.visible(x))) {
          const v = cut(alt, max - size);
          parts.push(` ${v} `);
          size += v.length;
        }
        continue;
      }
      if (SKIP_TAGS.has(tag) || tag === "SELECT" || tag === "TEXTAREA" || tag === "INPUT") continue;
      // Text of two boxes (block elements, cells) reads as two words.
      const display = doc.display(x);
      if (BLOCK_TAGS.has(tag) || (display !== "" && !display.startsWith("inline"))) parts.push(" ");
    } else if (type !== DOCUMENT_FRAGMENT) continue;
    pushKids(doc, x, stack);
  }
  return parts.join("");
}

/** The `<option>`s of a select (inside `<optgroup>`s too), with their selected state. */
function optionsOf(
  doc: Doc,
  i: number,
  out: LiteWriter,
): { name: string; selected: boolean }[] {
  const found: { name: string; selected: boolean }[] = [];
  let visits = 0;
  const stack: number[] = [];
  pushKids(doc, i, stack);
  while (stack.length > 0 && visits++ < NAME_VISIT_MAX) {
    const x = stack.pop()!;
    if (doc.type(x) !== ELEMENT) continue;
    const tag = doc.tag(x);
    if (tag === "OPTION") {
      // Options of a closed select have no layout: their text is read regardless.
      const label = doc.attr(x, "label");
      const name = out.clip(
        label?.trim() ? label : nameFromContent(doc, x, NAME_MAX * 2, false),
        NAME_MAX,
      );
      found.push({ name, selected: doc.selected(x) });
    } else if (tag === "OPTGROUP") pushKids(doc, x, stack);
  }
  return found;
}

/** A link's absolute URL: `href` against the document's base URL, else the frame's URL. */
function resolveUrl(href: string, base: string | undefined, frameUrl: string): string {
  const h = href.trim();
  // A giant href is not parsed whole: past the shown length it cannot change the line.
  const bounded = h.length > 8 * TARGET_MAX ? h.slice(0, 8 * TARGET_MAX) : h;
  try {
    return new URL(bounded, base || frameUrl).href;
  } catch {
    try {
      return new URL(bounded, frameUrl).href;
    } catch {
      return bounded; // shown as "(invalid url)"
    }
  }
}

/** Cuts a string before any normalizing, so a giant value costs no more than a short one. */
function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(max - 1, 0))}…` : text;
}
