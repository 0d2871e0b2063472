/**
 * The one visibility rule: which of a page's text and controls any view shows. The outline
 * (from the accessibility tree or, for a huge tab, a DOM snapshot), `browser_find` and diffs
 * (made of the outline's lines) and reading mode (Readability, on a copy of the document
 * pruned in the runtime's isolated world) all apply it, so text one of them leaves out none
 * of them shows. docs/snapshot.md states it once, from {@link VISIBILITY_RULE}.
 *
 * The rule reads the live element's computed style, never its inline `style=` alone: a class
 * hides as well as an attribute does.
 *
 * | the element                                                      | what is shown                |
 * | ---------------------------------------------------------------- | ---------------------------- |
 * | has no box: computed `display: none` (so the `hidden` attribute), | nothing of it, nor of what   |
 * | in a closed `<details>`, a shadow host's unslotted child           | it holds                     |
 * | is `inert` (the attribute, on it or an ancestor)                   | nothing of it                |
 * | computed `content-visibility: hidden` (so `hidden=until-found`)    | itself, nothing it holds     |
 * | `aria-hidden="true"`                                               | no text; its visible controls |
 * | computed `visibility: hidden` or `collapse`                        | not its own text or control; |
 * |                                                                    | a descendant made `visible` is |
 * | zero size, clipped (`clip`, `clip-path`, `overflow`), off-screen,  | shown, as a screen reader    |
 * | transparent                                                        | reads it                     |
 *
 * Why text that only cannot be *seen* is shown: it is what assistive technology reads (a
 * "skip to content" link, an icon button's name, a table's caption for screen readers), and
 * a page that wants the model to read a sentence can as well print it: leaving it out would
 * cost real content and protect nothing. Content hidden only because a modal dialog is open
 * is shown too: it is on screen, and the dialog's own controls are listed with it.
 *
 * How each view applies it:
 * - the accessibility tree: Chromium leaves out or marks ignored exactly the elements the
 *   rule hides ({@link axHidden} reads its verdict, modal dialogs aside); tests prove it per
 *   property;
 * - a DOM snapshot: the walk asks for {@link VISIBILITY_STYLES} and calls {@link judge} with
 *   each element's facts; a node without a layout object has no box;
 * - in the page (reading mode, the controls under `aria-hidden`): {@link IN_PAGE_RULE} is
 *   {@link judge}'s own source with the live element's computed style.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";

/** What the rule says of an element, from hiding most to least. */
export type Verdict =
  /** Nothing of it and nothing it holds (no box, or inert). */
  | "gone"
  /** It (its box) stays, nothing it holds is shown. */
  | "contents-gone"
  /** No text of it or in it; visible controls in it are still listed (the outline). */
  | "controls-only"
  /** Not its own text, nor it as a control; its descendants are judged on their own. */
  | "self-gone"
  | "shown";

/** What the rule reads of one element. */
export interface ElementFacts {
  /** Whether it has a box (a layout object), or is `display: contents` (its children may). */
  box: boolean;
  /** Computed `display`. */
  display: string;
  /** Computed `visibility`. */
  visibility: string;
  /** Computed `content-visibility`. */
  contentVisibility: string;
  /** Whether it has the `inert` attribute. */
  inert: boolean;
  /** Its `aria-hidden` attribute, null when absent. */
  ariaHidden: string | null;
}

/** One line of the rule, as docs/snapshot.md states it. */
export interface RuleLine {
  /** How the page hides (or only appears to hide) the element. */
  what: string;
  verdict: Verdict;
}

/** The rule as data: every way of hiding the views know, and what each leaves. */
export const VISIBILITY_RULE: readonly RuleLine[] = [
  { what: "computed display: none (and so the hidden attribute)", verdict: "gone" },
  { what: "no box: in a closed <details>, a shadow host's unslotted child", verdict: "gone" },
  { what: "the inert attribute, on it or an ancestor", verdict: "gone" },
  {
    what: "computed content-visibility: hidden (and so hidden=until-found)",
    verdict: "contents-gone",
  },
  { what: 'aria-hidden="true"', verdict: "controls-only" },
  { what: "computed visibility: hidden or collapse", verdict: "self-gone" },
  {
    what: "zero size, clipped (clip, clip-path, overflow), off-screen, transparent",
    verdict: "shown",
  },
];

/** The computed styles a DOM snapshot must ask for, in this order (the walk reads by index). */
export const VISIBILITY_STYLES: readonly string[] = ["display", "visibility", "content-visibility"];

/**
 * The rule for one element. Self-contained (no imports, no closure, plain JS once its types
 * are stripped): {@link IN_PAGE_RULE} is its own source, run in the page's isolated world.
 */
export function judge(f: ElementFacts): Verdict {
  if (f.display === "none" || (!f.box && f.display !== "contents")) return "gone";
  if (f.inert) return "gone";
  if (f.contentVisibility === "hidden") return "contents-gone";
  if (String(f.ariaHidden).trim().toLowerCase() === "true") return "controls-only";
  if (f.visibility === "hidden" || f.visibility === "collapse") return "self-gone";
  return "shown";
}

/**
 * Source of an in-page function `(el) => Verdict`: {@link judge} with the live element's
 * computed style. To be run in the runtime's isolated world, whose `getComputedStyle` and
 * `checkVisibility` a page cannot patch. `checkVisibility()` tells whether the element has a
 * box (false in a closed `<details>`, for an unslotted child, under `display: none`).
 */
export const IN_PAGE_RULE = `(() => {
  const judge = ${judge.toString()};
  return (el) => {
    const s = getComputedStyle(el);
    return judge({
      box: el.checkVisibility(),
      display: s.display,
      visibility: s.visibility,
      contentVisibility: s.contentVisibility,
      inert: el.hasAttribute("inert"),
      ariaHidden: el.getAttribute("aria-hidden"),
    });
  };
})()`;

/**
 * Source of an in-page function `(doc) => {copy, twins}`: a deep copy of `doc` whose body
 * holds only what the rule shows as text (reading mode's), and `twins`, a Map from each
 * copied `a[href]` to its live element, taken in the same synchronous pass as the copy (no
 * page script runs in between, so no place in a list is looked up twice). Gone,
 * contents-gone and controls-only elements leave the copy with what they hold; a self-gone
 * element loses its own text and keeps its descendants, each judged on its own. Kept
 * elements lose the attributes and inline styles Readability would judge on its own (it
 * reads `hidden`, inline `display`/`visibility` and no stylesheet): the rule has judged them.
 * The head is copied whole (its title and metadata are not page text). Null when the copy
 * does not mirror the document node for node (it cannot, but then nothing is read).
 */
export const IN_PAGE_PRUNED_COPY = `(doc) => {
  const verdictOf = ${IN_PAGE_RULE};
  // A page of 60,000 paragraphs must be copied in well under a second, and a computed style
  // costs more than the rest of an element's visit: most elements are judged at once by
  // checkVisibility (a box, not skipped, visibility visible) and the selector engine (no
  // hiding attribute); only their own content-visibility is then left, which only their own
  // text needs. The rest get the whole rule.
  const marked = new Set(doc.querySelectorAll("[inert], [aria-hidden]"));
  const quick = (el) => !marked.has(el) && el.checkVisibility({ visibilityProperty: true });
  const ownText = (el) => {
    for (let t = el.firstChild; t; t = t.nextSibling) {
      if (t.nodeType === 3 && /\\S/.test(t.data)) return true;
    }
    return false;
  };
  // The rule's "no box", for text: a shadow host's unslotted text has no layout, a closed
  // <details> skips all but its summary (its elements say so through checkVisibility(); its
  // text can only be known by its parent). Whitespace is not asked.
  const range = doc.createRange();
  const textBox = (t, parent) => {
    if (!/\\S/.test(t.data)) return true;
    if (parent.localName === "details" && !parent.open) return false;
    if (!parent.shadowRoot) return true;
    range.selectNodeContents(t);
    return range.getClientRects().length > 0;
  };
  const copy = doc.cloneNode(true);
  const twins = new Map();
  if (!doc.body || !copy.body) return { copy, twins };
  const stack = [[doc.body, copy.body]];
  while (stack.length > 0) {
    const [live, copied] = stack.pop();
    let verdict = quick(live) ? "shown" : verdictOf(live);
    if (verdict === "gone" || verdict === "controls-only") {
      copied.remove();
      continue;
    }
    if (copied.hasAttributes()) {
      copied.removeAttribute("hidden");
      if (copied.hasAttribute("style") && copied.style) {
        if (copied.style.display === "none") copied.style.removeProperty("display");
        if (copied.style.visibility) copied.style.removeProperty("visibility");
      }
    }
    if (live.localName === "a" && live.hasAttribute("href")) twins.set(copied, live);
    if (verdict === "shown" && ownText(live) && getComputedStyle(live).contentVisibility === "hidden") {
      verdict = "contents-gone";
    }
    if (verdict === "contents-gone") {
      copied.replaceChildren();
      continue;
    }
    let c = copied.firstChild;
    for (let l = live.firstChild; l; l = l.nextSibling) {
      if (!c || c.nodeType !== l.nodeType || c.nodeName !== l.nodeName) return null;
      const next = c.nextSibling;
      if (l.nodeType === 1) stack.push([l, c]);
      else if (l.nodeType === 3 && (verdict === "self-gone" || !textBox(l, live))) c.remove();
      c = next;
    }
    if (c) return null;
  }
  return { copy, twins };
}`;

/**
 * Source of an in-page function `(el) => boolean`: whether the rule lists control `el` as a
 * control: neither it nor an ancestor is gone, no ancestor hides its contents, and it is not
 * self-gone (`aria-hidden` ancestors are no bar: their controls are listed).
 */
export const IN_PAGE_CONTROL_SHOWN = `(() => {
  const verdictOf = ${IN_PAGE_RULE};
  return (el) => {
    const own = verdictOf(el);
    if (own === "gone" || own === "self-gone") return false;
    for (let a = el.parentElement; a; a = a.parentElement) {
      const v = verdictOf(a);
      if (v === "gone" || v === "contents-gone") return false;
    }
    return true;
  };
})()`;

/**
 * Whether the accessibility tree hides a node by the rule: Chromium marks ignored (or
 * leaves out) what it hides, and its children are then looked at on their own. A node
 * ignored only because a modal dialog is open is shown: it is on screen and clickable (as
 * Playwright's snapshot keeps it).
 */
export function axHidden(node: Protocol.Accessibility.AXNode): boolean {
  if (!node.ignored) return false;
  const reasons = node.ignoredReasons ?? [];
  return !(reasons.length > 0 && reasons.every((r) => r.name === "activeModalDialog"));
}

/**
 * Source of an in-page function `(doc) => HTMLOptionElement[]`: the options of `doc`'s selects
 * that the list people open never shows, by the rule (computed `display: none` on the option
 * or its `<optgroup>`, so the `hidden` attribute). A closed select's options have no box, so
 * their own computed `display` is what says it; the accessibility tree lists them all.
 */
export const IN_PAGE_HIDDEN_OPTIONS = `(doc) => {
  const none = (el) => el.hidden || getComputedStyle(el).display === "none";
  const found = [];
  for (const o of doc.querySelectorAll("select option")) {
    const group = o.parentElement && o.parentElement.localName === "optgroup" ? o.parentElement : null;
    if (none(o) || (group && none(group))) found.push(o);
    if (found.length >= 2000) break;
  }
  return found;
}`;
