/**
 * The outline of a tab read from its accessibility trees (the default; see
 * `dom_outline.ts` for a huge tab): headings, visible text, and one line per interactive
 * element with its ref, role, name and the state that matters. This file only walks the
 * tree and says what each node is; lines are formatted by `outline_line.ts` and written,
 * redacted and budgeted by `outline_writer.ts`. Pure: no CDP here, so it is tested on canned
 * trees.
 *
 * The walk is iterative (an explicit stack, no recursion on tree depth) and every lookup
 * under a node visits a bounded number of nodes, so a tree built to be deep or wide costs
 * its size and no more; child frames nest a bounded depth (`MAX_FRAME_DEPTH`).
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import {
  ARIA_CONTROL_ROLES,
  type ControlFacts,
  LINE_MAX,
  NAME_MAX,
  VALUE_MAX,
} from "./outline_line.ts";
import { type OutlineBuilder, outlineBuilder, type OutlineWriter } from "./outline_writer.ts";
import { axHidden } from "./visibility.ts";

type AXNode = Protocol.Accessibility.AXNode;

/** One frame's accessibility tree plus what the outline needs to know about it. */
export interface AxFrame {
  /** Unique key of the frame (its frame id). */
  readonly key: string;
  /** The frame document's URL. */
  readonly url: string;
  readonly nodes: AXNode[];
  /** Backend ids of `<input type=password>` elements: their values are never shown. */
  readonly passwordFields: ReadonlySet<number>;
  /** Child frames keyed by the backend id of their owner `<iframe>` in this frame. */
  readonly childFrames: ReadonlyMap<number, AxFrame>;
  /**
   * Visible controls inside `aria-hidden` subtrees (which the accessibility tree prunes),
   * keyed by the backend id of their `aria-hidden` root.
   */
  readonly hiddenControls?: ReadonlyMap<number, HiddenControl[]>;
  /**
   * Backend ids of select options the visibility rule hides (`hidden`, `display: none`): the
   * accessibility tree lists them, the list people open does not.
   */
  readonly hiddenOptions?: ReadonlySet<number>;
}

/** A visible control the accessibility tree does not expose (under `aria-hidden`). */
export interface HiddenControl {
  backendNodeId: number;
  role: string;
  name: string;
  url: string | null;
}

/** Issues a ref for an element of a frame. */
export type AxRefIssuer = (frame: AxFrame, backendNodeId: number) => string;

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
/** Nodes a select's options or an editable region's text may visit. */
const SUBTREE_VISIT_MAX = 100_000;

/** Builds the outline of an accessibility frame tree (see {@link OutlineBuilder}). */
export const buildAxOutline: OutlineBuilder<AxFrame, AxRefIssuer> = outlineBuilder(renderFrame);

/** What the walk's stack holds: a node to visit, or the end of a block to flush. */
type Step = { node: AXNode; suppressText: boolean } | "flush";

function renderFrame(frame: AxFrame, issueRef: AxRefIssuer, out: OutlineWriter, depth: number) {
  const byId = new Map<string, AXNode>();
  for (const n of frame.nodes) byId.set(n.nodeId, n);
  const root = frame.nodes.find((n) => !n.parentId) ?? frame.nodes[0];
  if (!root) return;
  out.stats.frames++;
  const withControls = nodesHoldingControls(frame, byId);

  const shownHidden = new Set<number>();
  const emitHidden = (rootId: number): void => {
    const list = frame.hiddenControls?.get(rootId);
    if (!list || shownHidden.has(rootId)) return;
    shownHidden.add(rootId);
    for (const h of list) {
      out.stats.interactive++;
      const target = h.url ? out.target(h.url, frame.url) : undefined;
      out.control({
        ref: issueRef(frame, h.backendNodeId),
        role: h.role,
        name: out.clip(h.name, NAME_MAX),
        ...(target !== undefined ? { target } : {}),
      });
    }
  };

  const stack: Step[] = [];
  // Children are pushed last first, so that they pop in document order.
  const pushChildren = (node: AXNode, suppressText: boolean, controlsOnly = false): void => {
    const ids = node.childIds ?? [];
    for (let k = ids.length - 1; k >= 0; k--) {
      const child = byId.get(ids[k]);
      if (!child || (controlsOnly && !withControls.has(child))) continue;
      stack.push({ node: child, suppressText });
    }
  };

  pushChildren(root, false);
  while (stack.length > 0 && !out.truncated) {
    const step = stack.pop()!;
    if (step === "flush") {
      out.flush();
      continue;
    }
    const { node, suppressText } = step;
    const role = String(node.role?.value ?? "");
    if (node.ignored && node.backendDOMNodeId !== undefined) emitHidden(node.backendDOMNodeId);
    // The visibility rule (visibility.ts): Chromium's tree has applied it.
    if (axHidden(node)) {
      pushChildren(node, suppressText);
      continue;
    }
    if (SKIP_ROLES.has(role)) continue;
    if (role === "StaticText") {
      if (!suppressText) {
        const parentRole = node.parentId ? byId.get(node.parentId)?.role?.value : undefined;
        out.text(String(node.name?.value ?? ""), node.parentId, parentRole === "generic");
      }
      continue;
    }
    if (role === "LineBreak") {
      out.flush();
      continue;
    }
    if (role === "Iframe" || role === "IframePresentational") {
      const child = node.backendDOMNodeId !== undefined
        ? frame.childFrames.get(node.backendDOMNodeId)
        : undefined;
      if (!child) continue;
      if (!out.frame(child.url, depth, () => renderFrame(child, issueRef, out, depth + 1))) {
        break;
      }
      continue;
    }
    if (isControl(node, role)) {
      if (node.backendDOMNodeId === undefined) {
        pushChildren(node, suppressText);
        continue;
      }
      out.stats.interactive++;
      const ref = issueRef(frame, node.backendDOMNodeId);
      out.control(controlFacts(node, role, frame, ref, byId, out));
      // Controls speak through their name; only nested controls are worth descending for.
      pushChildren(node, true, true);
      continue;
    }
    if (role === "heading") {
      const level = Number(prop(node, "level") ?? 2);
      const name = out.clip(String(node.name?.value ?? ""), LINE_MAX);
      out.flush();
      if (name) out.heading(level, name);
      stack.push("flush");
      pushChildren(node, true);
      continue;
    }
    if (CELL_ROLES.has(role)) {
      out.separator(" | ");
      pushChildren(node, suppressText);
      continue;
    }
    if (INLINE_ROLES.has(role)) {
      pushChildren(node, suppressText);
      continue;
    }
    // Everything else is a block: it starts and ends a line.
    out.flush();
    if (role === "listitem") out.bullet();
    stack.push("flush");
    pushChildren(node, suppressText);
  }
  // Roots the accessibility tree did not keep at all still get their controls listed.
  for (const rootId of frame.hiddenControls?.keys() ?? []) emitHidden(rootId);
}

/**
 * The nodes that are, or hold, a control or a child frame: the only ones worth visiting
 * inside a control. One pass up from each control to its ancestors (each node marked once),
 * instead of a search under every node. An option is never one, nor seen through.
 */
function nodesHoldingControls(frame: AxFrame, byId: Map<string, AXNode>): Set<AXNode> {
  const parentOf = new Map<string, AXNode>();
  for (const n of frame.nodes) {
    for (const id of n.childIds ?? []) {
      const c = byId.get(id);
      if (c && !parentOf.has(id)) parentOf.set(id, n);
    }
  }
  const marked = new Set<AXNode>();
  for (const n of frame.nodes) {
    const role = String(n.role?.value ?? "");
    const base = (!axHidden(n) && isControl(n, role)) ||
      (role === "Iframe" && n.backendDOMNodeId !== undefined &&
        frame.childFrames.has(n.backendDOMNodeId));
    if (!base) continue;
    for (
      let x: AXNode | undefined = n;
      x && !marked.has(x) && x.role?.value !== "option";
      x = parentOf.get(x.nodeId)
    ) marked.add(x);
  }
  return marked;
}

function isControl(node: AXNode, role: string): boolean {
  if (role === "option") return false; // listed on their select
  if (CONTROL_ROLES.has(role)) return true;
  // contenteditable roots are focusable rich-text regions.
  return prop(node, "editable") === "richtext" && prop(node, "focusable") === true;
}

function controlFacts(
  node: AXNode,
  role: string,
  frame: AxFrame,
  ref: string,
  byId: Map<string, AXNode>,
  out: OutlineWriter,
): ControlFacts {
  const isPassword = node.backendDOMNodeId !== undefined &&
    frame.passwordFields.has(node.backendDOMNodeId);
  const shownRole = isPassword ? "password" : CONTROL_ROLES.has(role) ? role : "editable";
  const facts: ControlFacts = {
    ref,
    role: shownRole,
    name: out.clip(String(node.name?.value ?? ""), NAME_MAX),
  };
  if (role === "link") {
    const url = prop(node, "url");
    // Redacted before the overview shortens it to its origin.
    const target = typeof url === "string" && url ? out.target(url, frame.url) : undefined;
    if (target !== undefined) facts.target = target;
  }
  const value = node.value?.value;
  if (role === "combobox" || role === "listbox") {
    const options = collectOptions(node, byId, out, frame.hiddenOptions);
    const selected = options.filter((o) => o.selected).map((o) => o.name);
    if (role === "combobox" && value !== undefined && !isPassword) {
      facts.values = [out.clip(String(value), VALUE_MAX)];
    } else if (selected.length > 0) facts.values = selected;
    facts.options = options.map((o) => o.name);
  } else if (!isPassword && value !== undefined && value !== "") {
    if (role !== "link" && role !== "button") facts.values = [out.clip(String(value), VALUE_MAX)];
  } else if (!isPassword && shownRole === "editable") {
    const text = textOf(node, byId);
    if (text) facts.values = [out.clip(text, VALUE_MAX)];
  }
  const checked = prop(node, "checked") ?? prop(node, "pressed");
  if (checked === "true" || checked === true) facts.checked = "true";
  if (checked === "mixed") facts.checked = "mixed";
  if (prop(node, "selected") === true && role === "tab") facts.selectedTab = true;
  if (prop(node, "expanded") === true) facts.expanded = true;
  if (prop(node, "disabled") === true) facts.disabled = true;
  return facts;
}

/** The nodes under `node` in document order, at most {@link SUBTREE_VISIT_MAX}. */
function* descendants(node: AXNode, byId: Map<string, AXNode>, into: (n: AXNode) => boolean) {
  const stack: AXNode[] = [];
  const push = (n: AXNode) => {
    const ids = n.childIds ?? [];
    for (let k = ids.length - 1; k >= 0; k--) {
      const c = byId.get(ids[k]);
      if (c) stack.push(c);
    }
  };
  push(node);
  let visits = 0;
  while (stack.length > 0 && visits++ < SUBTREE_VISIT_MAX) {
    const n = stack.pop()!;
    yield n;
    if (into(n)) push(n);
  }
}

function collectOptions(
  node: AXNode,
  byId: Map<string, AXNode>,
  out: OutlineWriter,
  hidden: ReadonlySet<number> | undefined,
): { name: string; selected: boolean }[] {
  const found: { name: string; selected: boolean }[] = [];
  const isOption = (n: AXNode) => n.role?.value === "option";
  for (const c of descendants(node, byId, (n) => !isOption(n))) {
    if (!isOption(c)) continue;
    // The visibility rule: an option the page hides is not in the list people open.
    if (c.backendDOMNodeId !== undefined && hidden?.has(c.backendDOMNodeId)) continue;
    found.push({
      name: out.clip(String(c.name?.value ?? ""), NAME_MAX),
      selected: prop(c, "selected") === true,
    });
  }
  return found;
}

function textOf(node: AXNode, byId: Map<string, AXNode>): string {
  const parts: string[] = [];
  const isText = (n: AXNode) => n.role?.value === "StaticText";
  for (const c of descendants(node, byId, (n) => !isText(n))) {
    if (isText(c)) parts.push(String(c.name?.value ?? ""));
  }
  return parts.join(" ").replace(/\s+/g, " ").trim();
}

function prop(node: AXNode, name: string): unknown {
  return node.properties?.find((p) => p.name === name)?.value.value;
}
