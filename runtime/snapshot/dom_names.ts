/**
 * Accessible names computed from a DOM snapshot the short way (ARIA, labels, content, then
 * attributes) for the DOM-snapshot outline, and a select's options. Every lookup visits at
 * most {@link NAME_VISIT_MAX} nodes and cuts each string before normalizing it, so nested
 * controls on a hostile page cost a bounded amount each.
 *
 * @module
 */
import { NAME_MAX } from "./outline_line.ts";
import type { OutlineWriter } from "./outline_writer.ts";
import {
  BLOCK_TAGS,
  type Doc,
  DOCUMENT_FRAGMENT,
  ELEMENT,
  isEditableRoot,
  pushKids,
  SKIP_TAGS,
  TEXT,
} from "./dom_doc.ts";

/** Input types and the role Chromium gives them; absent types are text boxes. */
export const INPUT_ROLES: Record<string, string> = {
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

/** Nodes a name, a heading or a select's options may visit: bounds nested-control pages. */
export const NAME_VISIT_MAX = 500;

/** The accessible name, computed the short way: ARIA, labels, content, then attributes. */
export function nameOf(doc: Doc, i: number, tag: string, labelAncestor: number): string {
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
export function labelsCheckable(doc: Doc, label: number): boolean {
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

/**
 * The visible text under a node (image alt texts included), at most `max` characters and
 * `NAME_VISIT_MAX` nodes visited. `rendered` false reads hidden text too (`aria-labelledby`
 * may name an element that is not shown).
 */
export function nameFromContent(doc: Doc, i: number, max: number, rendered = true): string {
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
export function optionsOf(
  doc: Doc,
  i: number,
  out: OutlineWriter,
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
      // The visibility rule (IN_PAGE_HIDDEN_OPTIONS), as far as a snapshot tells it: a closed
      // select's options have no layout, so no computed style, only their attributes.
      if (doc.attr(x, "hidden") !== undefined) continue;
      // Options of a closed select have no layout: their text is read regardless.
      const label = doc.attr(x, "label");
      const name = out.clip(
        label?.trim() ? label : nameFromContent(doc, x, NAME_MAX * 2, false),
        NAME_MAX,
      );
      found.push({ name, selected: doc.selected(x) });
    } else if (tag === "OPTGROUP" && doc.attr(x, "hidden") === undefined) pushKids(doc, x, stack);
  }
  return found;
}

/** Cuts a string before any normalizing, so a giant value costs no more than a short one. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(max - 1, 0))}…` : text;
}
