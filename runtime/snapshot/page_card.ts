/**
 * The page card: what an action (a navigation, a click, typing, a key, a tab switch) answers
 * by default, a few hundred characters instead of a page view. The agent asks for the rest:
 * `browser_snapshot` for the whole page, `browser_find` for one line, or `answer: "overview"`
 * on the action (or the policy's `views.action_answer`) for the view the action used to send.
 *
 * A card is a runtime status line, one untrusted-page block and, when it left lines out, a
 * `more:` line naming the calls that show them:
 *
 * - the same document as the agent's last view: what changed, as the diff writes it
 *   (`diff_format.ts`), its first lines up to the card's budget, then the controls near the
 *   element the action acted on (`<<<near e12>>>` and their lines as context, `  [e13] …`);
 * - another document (or a first view, or a page that changed throughout): its path and
 *   title, counts of its controls (`12 links, 3 buttons, 4 fields`) on the status line, and
 *   its headings and controls other than links in page order, each in its `[frame …]`, up
 *   to the budget.
 *
 * The card keeps every promise of the views, because it is made of their lines: the outline's
 * lines are redacted and escaped when they are written and follow the visibility rule, so
 * a card shows no text the outline would not; each line is redacted again before it is cut
 * (`redactCut()`), neutralized (no run of arrows of the page's reads as a marker), and kept
 * inside the block whose markers carry the session's nonce. Its own markers (`<<<near …>>>`)
 * are in the block's arrows, which page text cannot produce. Notices (refused requests,
 * dialogs, approvals, taint) are the response's lines, outside the card: it never cuts them.
 *
 * @module
 */
import { processRedactor, redactCut, type Redactor } from "../redact/mod.ts";
import { diffViews } from "./diff.ts";
import { formatDiff, type TypedValue } from "./diff_format.ts";
import { oneLine } from "./line_escape.ts";
import { frameMarker, headingLevelOf, lineRef, splitRef } from "./outline_line.ts";
import { type PageView, tabLabel } from "./page_view.ts";
import { neutralize, untrustedClose, untrustedOpen } from "./untrusted.ts";

/** Characters a card takes at most on pages of ordinary origins and titles. */
export const CARD_MAX_CHARS = 600;
/** A page line on a card is cut to this (redacted first). */
export const CARD_LINE_CHARS = 100;
/** The title and path lines are cut to this. */
export const CARD_HEAD_CHARS = 72;
/** How much of the card's budget the lines near the action may claim ahead of the diff. */
const NEAR_SHARE = 220;
/** Element lines shown before and after the one the action acted on. */
const NEAR_BEFORE = 1;
const NEAR_AFTER = 3;
/** How far from the acted element a near control may be, in lines. */
const NEAR_SPAN = 8;

/** What a card is made from. */
export interface CardInput {
  /** The agent's last view of the tab, if any. */
  before?: PageView;
  /** The tab as it is now. */
  after: PageView;
  /** Refs the action acted on: their neighbours are shown when the document stayed. */
  near?: readonly string[];
  /** Values the action typed (their field's changed line is left out as in a diff). */
  typed?: readonly TypedValue[];
  /** The card's budget in characters ({@link CARD_MAX_CHARS} by default). */
  maxChars?: number;
  redactor?: Redactor;
}

/** The card of `after` (see the module doc). */
export function renderCard(input: CardInput): string {
  const { before, after, typed = [], near = [] } = input;
  const maxChars = input.maxChars ?? CARD_MAX_CHARS;
  const redactor = input.redactor ?? processRedactor();
  const sameDoc = before !== undefined && before.docId === after.docId &&
    before.origin === after.origin;
  const diff = sameDoc ? diffViews(before, after) : undefined;
  if (diff) {
    return changesCard(formatDiff(diff, after, typed, redactor), after, near, maxChars, redactor);
  }
  const what = sameDoc ? "changed throughout" : before === undefined ? "first view" : "new page";
  return pageCard(after, what, maxChars, redactor);
}

/** Counts of a view's controls: `12 links, 3 buttons, 4 fields, 1 other control`. */
export function controlCounts(lines: readonly string[]): string {
  let links = 0, buttons = 0, fields = 0, other = 0;
  for (const line of lines) {
    const kind = controlKind(line);
    if (kind === "link") links++;
    else if (kind === "button") buttons++;
    else if (kind === "field") fields++;
    else if (kind === "other") other++;
  }
  const parts = [
    count(links, "link"),
    count(buttons, "button"),
    count(fields, "field"),
    count(other, "other control"),
  ].filter((p) => p !== "");
  return parts.length ? parts.join(", ") : "no controls";
}

function count(n: number, what: string): string {
  return n === 0 ? "" : `${n} ${what}${n === 1 ? "" : "s"}`;
}

/** Roles of controls that take a value or a state: fields. */
const FIELD_ROLES = new Set([
  "textbox",
  "searchbox",
  "combobox",
  "listbox",
  "password",
  "editable",
  "spinbutton",
  "slider",
  "checkbox",
  "radio",
  "switch",
]);

/** What a line is as the card counts it; undefined for a line that is no control. */
export function controlKind(line: string): "link" | "button" | "field" | "other" | undefined {
  const parts = splitRef(line);
  if (!parts) return undefined;
  // A link's line has its quoted name or its arrow right after the ref, or the word `link`.
  if (/^ (?:"|->)/.test(parts.rest) || /^ link(?: |$)/.test(parts.rest)) return "link";
  const role = /^ (\S+)/.exec(parts.rest)?.[1] ?? "";
  if (role === "button") return "button";
  return FIELD_ROLES.has(role) ? "field" : "other";
}

/** A page line as the card shows it: redacted, then cut, then neutralized. */
function cardLine(line: string, redactor: Redactor): string {
  return neutralize(oneLine(redactCut(line, CARD_LINE_CHARS, { redactor })));
}

/** Lines added while they fit a budget. */
class Budget {
  readonly lines: string[] = [];
  #left: number;
  constructor(chars: number) {
    this.#left = chars;
  }
  get left(): number {
    return this.#left;
  }
  /** Adds `lines` together if they all fit; false (nothing added) otherwise. */
  add(...lines: string[]): boolean {
    const cost = lines.reduce((n, l) => n + l.length + 1, 0);
    if (cost > this.#left) return false;
    this.lines.push(...lines);
    this.#left -= cost;
    return true;
  }
  /** Adds `line` whatever is left (a frame's close, whose room was kept). */
  force(line: string): void {
    this.lines.push(line);
    this.#left -= line.length + 1;
  }
}

function size(lines: readonly string[]): number {
  return lines.reduce((n, l) => n + l.length + 1, 0);
}

/**
 * The card of a document the agent saw: the diff's status line, its lines in the block up to
 * the budget, then the controls near the action as context lines.
 */
function changesCard(
  diffText: string,
  after: PageView,
  near: readonly string[],
  maxChars: number,
  redactor: Redactor,
): string {
  const all = diffText.split("\n");
  const status = all[0];
  // `no changes since your last view (doc d3)` is one line; otherwise the block's lines.
  const changes = all.length > 1 ? all.slice(2, -1) : [];
  const open = untrustedOpen("page", after.nonce);
  const close = untrustedClose("page", after.nonce);
  const shownBodies = new Set(changes.map((l) => l.slice(2)));
  const nearLines = nearControls(after.lines, near)
    .map((group) => ({
      ref: group.ref,
      lines: group.lines.filter((l) => !shownBodies.has(l)).map((l) =>
        `  ${cardLine(l, redactor)}`
      ),
    }))
    .filter((g) => g.lines.length > 0);
  const moreLine = (left: number) =>
    `more: ${left} more changed line(s) not shown; browser_snapshot shows the page`;
  const fixed = size([status, open, close]) +
    (changes.length ? size([moreLine(changes.length)]) : 0);
  const nearCost = Math.min(NEAR_SHARE, nearLines.reduce((n, g) => n + size(g.lines) + 20, 0));
  const budget = new Budget(maxChars - fixed - nearCost);
  let shown = 0;
  for (const line of changes) {
    // Lines the diff wrote are page text redacted and neutralized already; cut here again
    // from their redacted form (the marker lines `- <<<3 lines gone: …>>>` are the runtime's).
    const text = line.startsWith("- <<<")
      ? line
      : `${line.slice(0, 2)}${cardLine(line.slice(2), redactor)}`;
    if (!budget.add(text)) break;
    shown++;
  }
  const rest = new Budget(budget.left + nearCost);
  for (const g of nearLines) {
    const marker = `<<<near ${g.ref}>>>`;
    if (!rest.add(marker, g.lines[0])) break;
    for (const l of g.lines.slice(1)) if (!rest.add(l)) break;
  }
  const inner = [...budget.lines, ...rest.lines];
  if (inner.length === 0) return status;
  const out = [status, open, ...inner, close];
  if (shown < changes.length) out.push(moreLine(changes.length - shown));
  return out.join("\n");
}

/** The element lines around each acted-on ref still in `lines`, that ref's line among them. */
function nearControls(
  lines: readonly string[],
  refs: readonly string[],
): { ref: string; lines: string[] }[] {
  const out: { ref: string; lines: string[] }[] = [];
  for (const ref of new Set(refs)) {
    const at = lines.findIndex((l) => lineRef(l) === ref);
    if (at < 0) continue;
    const isControl = (i: number) => lineRef(lines[i]) !== undefined;
    const before: number[] = [];
    for (let i = at - 1; i >= Math.max(0, at - NEAR_SPAN) && before.length < NEAR_BEFORE; i--) {
      if (isControl(i)) before.unshift(i);
    }
    const after: number[] = [];
    const end = Math.min(lines.length, at + NEAR_SPAN);
    for (let i = at + 1; i < end && after.length < NEAR_AFTER; i++) {
      if (isControl(i)) after.push(i);
    }
    const picked = [...before, at, ...after];
    out.push({ ref, lines: picked.map((i) => lines[i].trimStart()) });
  }
  return out;
}

/**
 * The card of a page the agent has not seen (as it is now): counts, path and title, then its
 * headings and controls other than links in page order, each inside its frame's lines.
 */
function pageCard(view: PageView, what: string, maxChars: number, redactor: Redactor): string {
  const status = `doc ${view.docId}${tabLabel(view)} · ${what} · ${controlCounts(view.lines)}`;
  const open = untrustedOpen("page", view.nonce, view.origin, redactor);
  const close = untrustedClose("page", view.nonce);
  const head = [
    `path: ${neutralize(oneLine(redactCut(view.path, CARD_HEAD_CHARS, { redactor })))}`,
    `title: ${neutralize(oneLine(redactCut(view.title, CARD_HEAD_CHARS, { redactor })))}`,
  ];
  const more = `more: ${view.lines.length} lines in all: browser_snapshot, or browser_find`;
  const budget = new Budget(maxChars - size([status, open, ...head, close, more]));
  const wanted = (l: string) => headingLevelOf(l) > 0 || (controlKind(l) ?? "link") !== "link";
  let left = pickInFrames(view.lines, wanted, budget, redactor);
  // A page of text and links only: its first lines instead.
  if (budget.lines.length === 0) left = pickInFrames(view.lines, () => true, budget, redactor);
  const out = [status, open, ...head, ...budget.lines, close];
  if (left > 0 || budget.lines.length < view.lines.length) out.push(more);
  return out.join("\n");
}

/**
 * Adds the lines `wanted` picks, in page order, while they fit `budget`, each picked line
 * after the `[frame …]` lines it is inside (and their `[/frame]` once it leaves them).
 * Returns how many wanted lines did not fit.
 */
function pickInFrames(
  lines: readonly string[],
  wanted: (line: string) => boolean,
  budget: Budget,
  redactor: Redactor,
): number {
  const frames: { line: string; shown: boolean }[] = [];
  let full = false;
  let left = 0;
  for (const raw of lines) {
    const line = raw.trimStart();
    const marker = frameMarker(line);
    if (marker === 1) {
      frames.push({ line, shown: false });
      continue;
    }
    if (marker === -1) {
      const f = frames.pop();
      // A frame whose lines were shown is closed, whatever the budget (it reserved this).
      if (f?.shown) budget.force(line);
      continue;
    }
    if (!wanted(line)) continue;
    if (full) {
      left++;
      continue;
    }
    const opening = frames.filter((f) => !f.shown).map((f) => cardLine(f.line, redactor));
    // Room for the line, the frames it opens, and the close of every frame it is inside.
    const closes = frames.length * ("[/frame]".length + 1);
    const shown = cardLine(line, redactor);
    if (budget.left - closes < size([...opening, shown])) {
      full = true;
      left++;
      continue;
    }
    budget.add(...opening, shown);
    for (const f of frames) f.shown = true;
  }
  // Frames still open when the lines end (an outline cut at its budget).
  for (let f = frames.pop(); f; f = frames.pop()) if (f.shown) budget.force("[/frame]");
  return left;
}
