/**
 * Turns accessibility trees into the compact outline the model reads: headings, visible
 * text, and one line per interactive element with its ref, role, name and the state that
 * matters. Pure: no CDP here, so it is tested on canned trees.
 *
 * Every string read from the page is redacted where it enters the outline, before it is
 * shortened: a name or value before its 120-character cut, a link target before the
 * overview keeps only its origin, a text line before it is split or briefed. A cut can then
 * only fall in text that holds no secret (see `runtime/redact/cut.ts`).
 *
 * @module
 */
import { displayUrl } from "../net/display_url.ts";
import { processRedactor, redactClip, type Redactor } from "../redact/mod.ts";
import type { Protocol } from "../../cdp/mod.ts";

type AXNode = Protocol.Accessibility.AXNode;

/** One frame's accessibility tree plus what the outline needs to know about it. */
export interface OutlineFrame {
  /** Unique key of the frame (its frame id). */
  readonly key: string;
  /** The frame document's URL. */
  readonly url: string;
  readonly nodes: AXNode[];
  /** Backend ids of `<input type=password>` elements: their values are never shown. */
  readonly passwordFields: ReadonlySet<number>;
  /** Child frames keyed by the backend id of their owner `<iframe>` in this frame. */
  readonly childFrames: ReadonlyMap<number, OutlineFrame>;
  /**
   * Visible controls inside `aria-hidden` subtrees (which the accessibility tree prunes),
   * keyed by the backend id of their `aria-hidden` root.
   */
  readonly hiddenControls?: ReadonlyMap<number, HiddenControl[]>;
}

/** A visible control the accessibility tree does not expose (under `aria-hidden`). */
export interface HiddenControl {
  backendNodeId: number;
  role: string;
  name: string;
  url: string | null;
}

/** Issues a ref for an element of a frame. */
export type RefIssuer = (frame: OutlineFrame, backendNodeId: number) => string;

/** Counts of what the outline exposes, for tests and benchmarks. */
export interface OutlineStats {
  interactive: number;
  frames: number;
}

/** ARIA roles of controls: what an element's `role` attribute can make a control. */
export const ARIA_CONTROL_ROLES: readonly string[] = [
  "link",
  "button",
  "textbox",
  "searchbox",
  "combobox",
  "listbox",
  "checkbox",
  "radio",
  "switch",
  "slider",
  "spinbutton",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "tab",
  "treeitem",
];
/** Controls as Chromium's accessibility tree names them: the ARIA ones and its own. */
const CONTROL_ROLES = new Set([
  ...ARIA_CONTROL_ROLES,
  "option",
  "ColorWell",
  "Date",
  "DateTime",
  "InputTime",
  "PopUpButton",
  "ToggleButton",
]);
const SKIP_ROLES = new Set(["InlineTextBox", "ListMarker", "image", "img", "MenuListPopup"]);
const INLINE_ROLES = new Set([
  "StaticText",
  "generic",
  "emphasis",
  "strong",
  "mark",
  "code",
  "LabelText",
  "Abbr",
  "time",
  "subscript",
  "superscript",
  "insertion",
  "deletion",
  "Ruby",
  "none",
  "presentation",
]);
const CELL_ROLES = new Set(["cell", "gridcell", "columnheader", "rowheader"]);
const NAME_MAX = 120;
const VALUE_MAX = 120;
const OPTIONS_MAX = 20;
const LINE_MAX = 1_000;

/**
 * Builds the outline lines of a frame and its descendants; page strings are redacted with
 * `redactor` (the process's) before anything shortens them.
 */
export function buildOutline(
  root: OutlineFrame,
  issueRef: RefIssuer,
  redactor: Redactor = processRedactor(),
): { lines: string[]; brief: string[]; stats: OutlineStats } {
  const out = new OutlineWriter(redactor);
  const stats: OutlineStats = { interactive: 0, frames: 0 };
  renderFrame(root, issueRef, out, stats, 0);
  out.flush();
  return { lines: out.lines, brief: out.brief, stats };
}

/** How much of a text line the brief (overview) form keeps. */
export const BRIEF_TEXT_CHARS = 20;

class OutlineWriter {
  lines: string[] = [];
  /** The overview form of each line, aligned with `lines`. */
  brief: string[] = [];
  #pieces: string[] = [];
  #lastParent: string | undefined;
  #lastSpaced = false;
  #prefix = "";
  readonly #redactor: Redactor;

  constructor(redactor: Redactor) {
    this.#redactor = redactor;
  }

  /** A page string (name, value, heading) redacted, then cut to `max` characters. */
  clip(text: string, max: number): string {
    return redactClip(text, max, this.#redactor);
  }

  /** A page URL as shown (origin and path), redacted before anything shortens it. */
  url(url: string, base: string | undefined): string {
    return this.#redactor.redact(displayUrl(url, base));
  }

  /** Adds text; `parent` identifies its container, `spaced` says the container is a box. */
  text(piece: string, parent: string | undefined, spaced: boolean): void {
    const clean = piece.replace(/\s+/g, " ");
    if (!clean.trim()) {
      if (this.#pieces.length > 0) this.#pieces.push(" ");
      return;
    }
    const prev = this.#pieces.at(-1);
    // Text of two different boxes (divs) needs a space; text around <em> must not get one.
    if (
      prev !== undefined && parent !== this.#lastParent && (spaced || this.#lastSpaced) &&
      !/\s$/.test(prev) && !/^\s/.test(clean)
    ) this.#pieces.push(" ");
    this.#pieces.push(clean);
    this.#lastParent = parent;
    this.#lastSpaced = spaced;
  }

  /** The number of lines written so far (flushes pending text). */
  mark(): number {
    this.flush();
    return this.lines.length;
  }

  /** Drops lines written after `mark`. */
  rewind(mark: number): void {
    this.lines.length = mark;
    this.brief.length = mark;
  }

  separator(sep: string): void {
    if (this.#pieces.length > 0) this.#pieces.push(sep);
  }

  prefixNext(prefix: string): void {
    this.#prefix = prefix;
  }

  line(text: string, brief = text): void {
    this.flush();
    this.#emit(text, brief);
  }

  flush(): void {
    // Redacted whole, before the brief cut and the split: a value across text runs (or
    // across the split point) is found as one.
    const text = this.#redactor.redact(this.#pieces.join("")).trim();
    this.#pieces = [];
    this.#lastParent = undefined;
    // Lines of bare punctuation ("[", "] |", ".") left between links carry nothing.
    if (!/[\p{L}\p{N}]/u.test(text)) return;
    const brief = text.length > BRIEF_TEXT_CHARS ? `${text.slice(0, BRIEF_TEXT_CHARS - 1)}…` : text;
    for (let i = 0; i < text.length; i += LINE_MAX) {
      this.#emit(text.slice(i, i + LINE_MAX), i === 0 ? brief : "");
    }
  }

  #emit(text: string, brief: string): void {
    this.lines.push(this.#prefix + text);
    this.brief.push(brief && this.#prefix + brief);
    this.#prefix = "";
  }
}

function renderFrame(
  frame: OutlineFrame,
  issueRef: RefIssuer,
  out: OutlineWriter,
  stats: OutlineStats,
  depth: number,
): void {
  const byId = new Map<string, AXNode>();
  for (const n of frame.nodes) byId.set(n.nodeId, n);
  const root = frame.nodes.find((n) => !n.parentId) ?? frame.nodes[0];
  if (!root) return;
  stats.frames++;

  const shownHidden = new Set<number>();
  const emitHidden = (rootId: number): void => {
    const list = frame.hiddenControls?.get(rootId);
    if (!list || shownHidden.has(rootId)) return;
    shownHidden.add(rootId);
    for (const h of list) {
      stats.interactive++;
      const ref = issueRef(frame, h.backendNodeId);
      const name = out.clip(h.name, NAME_MAX);
      const head = `[${ref}] ${h.role}${name ? ` ${JSON.stringify(name)}` : ""}`;
      const target = h.url ? out.url(h.url, frame.url) : "";
      // A link by its arrow, as for every other control line.
      out.line(
        target ? `${h.role === "link" ? linkHead(ref, name) : head} -> ${target}` : head,
        target && !target.startsWith("/")
          ? `${head} -> ${target.replace(/^(https?:\/\/[^/]+).*$/, "$1")}`
          : head,
      );
    }
  };

  const walk = (node: AXNode, suppressText: boolean): void => {
    const role = String(node.role?.value ?? "");
    if (node.ignored && node.backendDOMNodeId !== undefined) emitHidden(node.backendDOMNodeId);
    if (node.ignored && !onlyModalHidden(node)) return walkChildren(node, suppressText);
    if (SKIP_ROLES.has(role)) return;
    if (role === "StaticText") {
      if (!suppressText) {
        const parentRole = node.parentId ? byId.get(node.parentId)?.role?.value : undefined;
        out.text(String(node.name?.value ?? ""), node.parentId, parentRole === "generic");
      }
      return;
    }
    if (role === "LineBreak") return out.flush();
    if (role === "Iframe" || role === "IframePresentational") {
      const child = node.backendDOMNodeId !== undefined
        ? frame.childFrames.get(node.backendDOMNodeId)
        : undefined;
      // A frame that failed to load shows Chromium's error page: not page content.
      if (!child || depth > 8 || child.url.startsWith("chrome-error:")) return;
      const mark = out.mark();
      out.line(`[frame ${out.url(child.url, undefined)}]`);
      renderFrame(child, issueRef, out, stats, depth + 1);
      // Frames with nothing to show (error pages, empty ads) cost lines and say nothing.
      if (out.mark() === mark + 1) out.rewind(mark);
      else out.line(`[/frame]`);
      return;
    }
    if (isControl(node, role)) {
      if (node.backendDOMNodeId === undefined) return walkChildren(node, suppressText);
      stats.interactive++;
      const ref = issueRef(frame, node.backendDOMNodeId);
      out.line(...controlLine(node, role, frame, ref, byId, out));
      // Controls speak through their name; only nested controls are worth descending for.
      return walkChildren(node, true, true);
    }
    if (role === "heading") {
      const level = Number(prop(node, "level") ?? 2);
      const name = out.clip(String(node.name?.value ?? ""), LINE_MAX);
      out.flush();
      if (name) out.line(`${"#".repeat(Math.min(Math.max(level, 1), 6))} ${name}`);
      walkChildren(node, true);
      return out.flush();
    }
    if (CELL_ROLES.has(role)) {
      out.separator(" | ");
      return walkChildren(node, suppressText);
    }
    if (INLINE_ROLES.has(role)) return walkChildren(node, suppressText);
    // Everything else is a block: it starts and ends a line.
    out.flush();
    if (role === "listitem") out.prefixNext("- ");
    walkChildren(node, suppressText);
    out.flush();
  };

  const walkChildren = (node: AXNode, suppressText: boolean, controlsOnly = false): void => {
    for (const id of node.childIds ?? []) {
      const child = byId.get(id);
      if (!child) continue;
      if (controlsOnly && !hasControl(child, byId, frame)) continue;
      walk(child, suppressText);
    }
  };

  walkChildren(root, false);
  // Roots the accessibility tree did not keep at all still get their controls listed.
  for (const rootId of frame.hiddenControls?.keys() ?? []) emitHidden(rootId);
}

/**
 * Whether a node is ignored only because a modal dialog is open. Such content is still
 * on screen and clickable, so the outline keeps it (as Playwright's snapshot does).
 */
function onlyModalHidden(node: AXNode): boolean {
  const reasons = node.ignoredReasons ?? [];
  return reasons.length > 0 && reasons.every((r) => r.name === "activeModalDialog");
}

function hasControl(node: AXNode, byId: Map<string, AXNode>, frame: OutlineFrame): boolean {
  const role = String(node.role?.value ?? "");
  if (role === "option") return false;
  if ((!node.ignored || onlyModalHidden(node)) && isControl(node, role)) return true;
  if (role === "Iframe" && node.backendDOMNodeId !== undefined) {
    return frame.childFrames.has(node.backendDOMNodeId);
  }
  return (node.childIds ?? []).some((id) => {
    const c = byId.get(id);
    return c !== undefined && hasControl(c, byId, frame);
  });
}

function isControl(node: AXNode, role: string): boolean {
  if (role === "option") return false; // listed on their select
  if (CONTROL_ROLES.has(role)) return true;
  // contenteditable roots are focusable rich-text regions.
  return prop(node, "editable") === "richtext" && prop(node, "focusable") === true;
}

function controlLine(
  node: AXNode,
  role: string,
  frame: OutlineFrame,
  ref: string,
  byId: Map<string, AXNode>,
  out: OutlineWriter,
): [full: string, brief: string] {
  const isPassword = node.backendDOMNodeId !== undefined &&
    frame.passwordFields.has(node.backendDOMNodeId);
  const shownRole = isPassword ? "password" : CONTROL_ROLES.has(role) ? role : "editable";
  const name = out.clip(String(node.name?.value ?? ""), NAME_MAX);
  let line = `[${ref}] ${shownRole}${name ? ` ${JSON.stringify(name)}` : ""}`;
  let target = "";
  let briefTarget = "";
  if (role === "link") {
    const url = prop(node, "url");
    if (typeof url === "string" && url) {
      // Redacted before the overview shortens it to its origin.
      const shown = out.url(url, frame.url);
      target = ` -> ${shown}`;
      // The overview names only foreign origins; paths are on the full pages.
      if (!shown.startsWith("/")) {
        briefTarget = ` -> ${shown.replace(/^(https?:\/\/[^/]+).*$/, "$1")}`;
      }
    }
  }
  const head = line;
  line = "";
  if (role === "combobox" || role === "listbox") {
    const options = collectOptions(node, byId, out);
    const selected = options.filter((o) => o.selected).map((o) => o.name);
    if (role === "combobox" && node.value?.value !== undefined && !isPassword) {
      line += ` = ${JSON.stringify(out.clip(String(node.value.value), VALUE_MAX))}`;
    } else if (selected.length > 0) {
      line += ` = ${selected.map((s) => JSON.stringify(s)).join(", ")}`;
    }
    line += optionsList(options.map((o) => o.name));
  } else if (!isPassword && node.value?.value !== undefined && node.value.value !== "") {
    if (role !== "link" && role !== "button") {
      line += ` = ${JSON.stringify(out.clip(String(node.value.value), VALUE_MAX))}`;
    }
  } else if (!isPassword && shownRole === "editable") {
    const text = textOf(node, byId);
    if (text) line += ` = ${JSON.stringify(out.clip(text, VALUE_MAX))}`;
  }
  const checked = prop(node, "checked") ?? prop(node, "pressed");
  if (checked === "true" || checked === true) line += " [checked]";
  if (checked === "mixed") line += " [mixed]";
  if (prop(node, "selected") === true && role === "tab") line += " [selected]";
  const expanded = prop(node, "expanded");
  if (expanded === true) line += " [expanded]";
  if (prop(node, "disabled") === true) line += " [disabled]";
  // A link's arrow says what it is: the full line drops the role word (`[e3] "Home" -> /`);
  // the overview, which shows most targets not at all, keeps it.
  const full = target ? linkHead(ref, name) : head;
  return [full + target + line, head + briefTarget + line];
}

/**
 * A link's line head: its arrow says what it is, so no role word (`[e3] "Home"`). Shared by
 * both outlines.
 */
export function linkHead(ref: string, name: string): string {
  return `[${ref}]${name ? ` ${JSON.stringify(name)}` : ""}`;
}

/** ` options: "A", "B" (+3 more)` for a select's option names; empty without options. */
export function optionsList(names: readonly string[]): string {
  if (names.length === 0) return "";
  const shown = names.slice(0, OPTIONS_MAX).map((n) => JSON.stringify(n)).join(", ");
  return ` options: ${shown}${
    names.length > OPTIONS_MAX ? ` (+${names.length - OPTIONS_MAX} more)` : ""
  }`;
}

function collectOptions(
  node: AXNode,
  byId: Map<string, AXNode>,
  out: OutlineWriter,
): { name: string; selected: boolean }[] {
  const found: { name: string; selected: boolean }[] = [];
  const visit = (n: AXNode) => {
    for (const id of n.childIds ?? []) {
      const c = byId.get(id);
      if (!c) continue;
      if (c.role?.value === "option") {
        found.push({
          name: out.clip(String(c.name?.value ?? ""), NAME_MAX),
          selected: prop(c, "selected") === true,
        });
      } else visit(c);
    }
  };
  visit(node);
  return found;
}

function textOf(node: AXNode, byId: Map<string, AXNode>): string {
  const parts: string[] = [];
  const visit = (n: AXNode) => {
    for (const id of n.childIds ?? []) {
      const c = byId.get(id);
      if (!c) continue;
      if (c.role?.value === "StaticText") parts.push(String(c.name?.value ?? ""));
      else visit(c);
    }
  };
  visit(node);
  return parts.join(" ").replace(/\s+/g, " ").trim();
}

function prop(node: AXNode, name: string): unknown {
  return node.properties?.find((p) => p.name === name)?.value.value;
}
