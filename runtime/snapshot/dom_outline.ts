/**
 * The outline of a huge tab, read from a DOM snapshot (`DOMSnapshot.captureSnapshot`)
 * instead of the accessibility tree, which costs Chromium ~50 µs per node: 15 s and more for
 * a page of 60,000 links, while its DOM snapshot takes about one second. The lines are the
 * accessibility outline's (`outline_line.ts`, written by `outline_writer.ts`), so paging,
 * overview pages and diffs work unchanged; roles and names are computed from the DOM
 * (aria-label, labels, text, alt, title, value), so they may differ slightly from the
 * accessibility tree's. This file only walks the snapshot. Pure: no CDP here, so it is
 * tested on canned snapshots.
 *
 * A hostile page controls the snapshot, so every walk is iterative (no recursion on DOM
 * depth), every name and value is cut before it is normalized, name lookups visit a bounded
 * number of nodes, and the writer stops at a line and character budget.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import { CUT_READ_MARGIN } from "../redact/mod.ts";
import {
  ARIA_CONTROL_ROLES,
  type ControlFacts,
  LINE_MAX,
  NAME_MAX,
  VALUE_MAX,
} from "./outline_line.ts";
import { type OutlineBuilder, outlineBuilder, type OutlineWriter } from "./outline_writer.ts";
import {
  BLOCK_TAGS,
  Doc,
  DOCUMENT_FRAGMENT,
  ELEMENT,
  isEditableRoot,
  SKIP_TAGS,
  TEXT,
} from "./dom_doc.ts";
import { INPUT_ROLES, labelsCheckable, nameFromContent, nameOf, optionsOf } from "./dom_names.ts";
import { judge } from "./visibility.ts";

type DocumentSnapshot = Protocol.DOMSnapshot.DocumentSnapshot;
type CaptureSnapshotResponse = Protocol.DOMSnapshot.CaptureSnapshotResponse;

/** One document of a DOM snapshot plus what the outline needs to know about it. */
export interface DomFrame {
  /** Unique key of the frame (its frame id). */
  readonly key: string;
  /** The frame document's URL. */
  readonly url: string;
  readonly document: DocumentSnapshot;
  /** The string table of the snapshot the document belongs to. */
  readonly strings: readonly string[];
  /**
   * Child frames keyed by the backend id of their owner `<iframe>`: same-process documents
   * of the same snapshot and out-of-process frames scanned on their own.
   */
  readonly childFrames: ReadonlyMap<number, DomFrame>;
}

/** Issues a ref for an element of a frame. */
export type DomRefIssuer = (frame: DomFrame, backendNodeId: number) => string;

/**
 * Turns the documents of one `DOMSnapshot.captureSnapshot` reply into frames. `urlOf` gives
 * the URL of a frame the caller knows (from its frame tree); documents of other frames (one
 * that appeared after the frame tree was read) are left out, as their refs could not be
 * bound. Same-process child documents go into the one `childFrames` map every frame of the
 * snapshot shares (backend ids are unique per renderer), which the caller may extend with
 * out-of-process frames.
 */
export function domFrames(
  snapshot: CaptureSnapshotResponse,
  urlOf: (frameId: string) => string | undefined,
): { frames: Map<string, DomFrame>; childFrames: Map<number, DomFrame> } {
  const childFrames = new Map<number, DomFrame>();
  const byIndex: (DomFrame | undefined)[] = snapshot.documents.map((document) => {
    const key = snapshot.strings[document.frameId] ?? "";
    const url = urlOf(key);
    if (!key || url === undefined) return undefined;
    return { key, url, document, strings: snapshot.strings, childFrames };
  });
  const frames = new Map<string, DomFrame>();
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
export function domTitle(frame: DomFrame): string {
  return frame.strings[frame.document.title] ?? "";
}

/** Builds the outline of frames from their DOM snapshots (see {@link OutlineBuilder}). */
export const buildDomOutline: OutlineBuilder<DomFrame, DomRefIssuer> = outlineBuilder(renderFrame);

/** ARIA roles listed as controls, as the accessibility outline lists them. */
const CONTROL_ROLES = new Set(ARIA_CONTROL_ROLES);
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
const CELL_TAGS = new Set(["TD", "TH"]);
const HEADING_TAGS: Record<string, number> = { H1: 1, H2: 2, H3: 3, H4: 4, H5: 5, H6: 6 };

/** Inherited context bits of a node, set by its parent before it is visited. */
const NO_TEXT = 1; // inside a control, a heading or an aria-hidden subtree
const CONTROLS_ONLY = 2; // inside a control or aria-hidden: only controls are listed
const IN_EDITABLE = 4; // inside a contenteditable root

/** What a node is for the outline. */
interface Control {
  role: string;
  isPassword: boolean;
}

function renderFrame(
  frame: DomFrame,
  issueRef: DomRefIssuer,
  out: OutlineWriter,
  depth: number,
): void {
  const doc = new Doc(frame.document, frame.strings);
  if (doc.n === 0) return;
  out.stats.frames++;
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
    // The visibility rule (visibility.ts); a node without a layout object is not visible.
    const verdict = judge(doc.facts(x));
    if (verdict === "gone") continue;
    const visible = doc.visible(x) && verdict !== "self-gone";
    if (verdict === "contents-gone") {
      // Its box stays (a block still parts the text around it); nothing it holds is shown.
      if (visible && BLOCK_TAGS.has(tag)) out.flush();
      continue;
    }
    const id = doc.backendId(x);
    if (tag === "BR") {
      if (visible) out.flush();
      continue;
    }
    const child = id !== undefined ? frame.childFrames.get(id) : undefined;
    if (child || tag === "IFRAME" || tag === "FRAME") {
      if (!child || !visible) continue;
      if (!out.frame(child.url, depth, () => renderFrame(child, issueRef, out, depth + 1))) {
        break;
      }
      continue;
    }
    if (tag === "LABEL") {
      label[x] = x;
      if (labelsCheckable(doc, x)) flags[x] |= NO_TEXT;
    }
    if (verdict === "controls-only") {
      // Text under aria-hidden is not page content, but its visible controls are clickable.
      flags[x] |= NO_TEXT | CONTROLS_ONLY;
    }
    const control = visible ? controlOf(doc, x, tag, flags[x]) : undefined;
    if (control && id !== undefined) {
      out.stats.interactive++;
      const ref = issueRef(frame, id);
      out.control(controlFacts(doc, frame, x, tag, control, ref, label[x], out));
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
      if (name) out.heading(level, name);
      flags[x] |= NO_TEXT;
      stack.push(~x);
      pushChildren(x);
      continue;
    }
    if (CELL_TAGS.has(tag) && visible) out.separator(" | ");
    const display = doc.display(x);
    if (BLOCK_TAGS.has(tag) && visible) {
      out.flush();
      if (tag === "LI") out.bullet();
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

function headingLevel(doc: Doc, i: number, tag: string): number {
  const role = (doc.attr(i, "role") ?? "").trim().toLowerCase();
  const native = HEADING_TAGS[tag];
  if (role === "heading" || (native && (role === "" || role === "heading"))) {
    const level = Number(doc.attr(i, "aria-level") ?? native ?? 2);
    return Number.isFinite(level) ? Math.min(Math.max(Math.trunc(level), 1), 6) : 2;
  }
  return 0;
}

function controlFacts(
  doc: Doc,
  frame: DomFrame,
  i: number,
  tag: string,
  control: Control,
  ref: string,
  labelAncestor: number,
  out: OutlineWriter,
): ControlFacts {
  const { role, isPassword } = control;
  const facts: ControlFacts = {
    ref,
    role,
    name: out.clip(nameOf(doc, i, tag, labelAncestor), NAME_MAX),
  };
  if (role === "link") {
    const href = doc.attr(i, "href");
    const url = href !== undefined
      ? resolveUrl(href, doc.strings[frame.document.baseURL], frame.url)
      : "";
    const target = url ? out.target(url, frame.url) : undefined;
    if (target !== undefined) facts.target = target;
  }
  if (tag === "SELECT") {
    const options = optionsOf(doc, i, out);
    const selected = options.filter((o) => o.selected).map((o) => o.name);
    if (selected.length > 0) facts.values = role === "combobox" ? [selected[0]] : selected;
    facts.options = options.map((o) => o.name);
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
    const shown = value ? out.clip(value, VALUE_MAX) : "";
    if (shown) facts.values = [shown];
  }
  const checked = tag === "INPUT" && (role === "checkbox" || role === "radio" || role === "switch")
    ? (doc.checked(i) ? "true" : "false")
    : (doc.attr(i, "aria-checked") ?? doc.attr(i, "aria-pressed") ?? "").trim().toLowerCase();
  if (checked === "true" || checked === "mixed") facts.checked = checked;
  if (role === "tab" && doc.attr(i, "aria-selected")?.trim().toLowerCase() === "true") {
    facts.selectedTab = true;
  }
  if (doc.attr(i, "aria-expanded")?.trim().toLowerCase() === "true") facts.expanded = true;
  const nativeDisabled = ["BUTTON", "INPUT", "SELECT", "TEXTAREA"].includes(tag) &&
    doc.attr(i, "disabled") !== undefined;
  if (nativeDisabled || doc.attr(i, "aria-disabled")?.trim().toLowerCase() === "true") {
    facts.disabled = true;
  }
  return facts;
}

/** A link's absolute URL: `href` against the document's base URL, else the frame's URL. */
function resolveUrl(href: string, base: string | undefined, frameUrl: string): string {
  const h = href.trim();
  // A giant href is not parsed whole: past the shown length it cannot change the line.
  const bounded = h.length > 8 * LINE_MAX ? h.slice(0, 8 * LINE_MAX) : h;
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
