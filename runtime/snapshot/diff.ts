/**
 * Snapshot diffs: after an action on a document whose previous view the agent has seen, the
 * agent gets only the lines that changed (added, removed, changed, with their refs) instead
 * of the whole page. Pure: the caller keeps the last view sent per tab and decides when a
 * diff may be sent; `renderDiff` says when it must not (another document, too large).
 *
 * Matching: an element line is identified by its ref (stable for one element within one
 * document), so a typed value or a new `[checked]` is one changed line, never a removal
 * and an addition; other lines are matched by content. The alignment is Myers' shortest
 * edit script, O((N+M)·D): common head and tail runs are skipped first and a small search
 * is tried before a large one, so a 20,000-line page with a few changes diffs in a few
 * milliseconds, and a rewritten page is refused by a cheap lower bound before any search.
 *
 * How a diff reads to the model is `diff_format.ts`; the edit script itself is
 * `edit_script.ts`.
 *
 * @module
 */
import { ADDED, REMOVED, shortestEdit } from "./edit_script.ts";
import { frameMarker, headingLevelOf, leadingSpaces, lineRefNumber } from "./outline_line.ts";
import type { PageView } from "./page_view.ts";

/** What a diff line is: new, gone, the same element with new text or place, or a locator. */
export type DiffOp = "added" | "removed" | "changed" | "context";

/** One line of a diff hunk. */
export interface DiffLine {
  op: DiffOp;
  /** The outline line: as it reads now, or for `removed` as it read before (unshortened). */
  text: string;
  /** The element ref the line carries (`e12`), if any. */
  ref?: string;
}

/** The changes between two views of one document. */
export interface ViewDiff {
  docId: string;
  added: number;
  removed: number;
  /** Lines whose element (same ref) has new text or a new place; each is shown once. */
  changed: number;
  /** The new title, only if it changed. */
  title?: string;
  /** The new path, only if it changed (same document: `history.pushState`). */
  path?: string;
  /**
   * Runs of adjacent changed lines in page order. A hunk opens with at most one `context`
   * line (its enclosing heading or parent, else the unchanged line just above it).
   */
  hunks: DiffLine[][];
}

/** Options of {@link diffViews}. */
export interface DiffOptions {
  /**
   * Give up (return `undefined`) past this many changes (an added, removed or changed
   * line; a moved element counts twice while it is searched): such a diff is no cheaper
   * than the page, and the cap bounds the search time and memory.
   */
  maxChanges?: number;
}

/** Default cap on changed lines; past it the full page is sent. */
export const DIFF_MAX_CHANGES = 2_000;
/** How far up a hunk's enclosing heading or parent is looked for (bounds the cost per hunk). */
export const CONTEXT_SCAN_LINES = 2_000;

const CHANGED = 3;
/** The old line of a moved element, not shown. */
const DROPPED = 4;
/** Edits tried before the lower bound is computed: most diffs after an action are smaller. */
const FIRST_SEARCH = 64;

/**
 * Computes what changed from `before` to `after`, two views of the same document. Returns
 * `undefined` when they are not diffable: another document or origin (refs and the agent's
 * picture of the page would not carry over), or more than `maxChanges` changes.
 */
export function diffViews(
  before: PageView,
  after: PageView,
  options: DiffOptions = {},
): ViewDiff | undefined {
  if (before.docId !== after.docId || before.origin !== after.origin) return undefined;
  const maxChanges = options.maxChanges ?? DIFF_MAX_CHANGES;
  const bLines = before.lines;
  const aLines = after.lines;
  // An element line is the same line as long as its ref is: its text may change (a typed
  // value, [checked]). A ref on two lines of one view is page text imitating an element
  // line; such lines are matched by content, like text.
  const [bRefs, aRefs] = refKeys(bLines, aLines);
  const same = (x: number, y: number): boolean => {
    const r = bRefs[x];
    return r >= 0 ? r === aRefs[y] : aRefs[y] < 0 && bLines[x] === aLines[y];
  };
  const n = bLines.length;
  const m = aLines.length;
  let head = 0;
  while (head < n && head < m && same(head, head)) head++;
  let tail = 0;
  while (tail < n - head && tail < m - head && same(n - 1 - tail, m - 1 - tail)) tail++;
  // A few changes are found with a small search; only then is the lower bound worth its
  // hashing, and it refuses a rewritten page before the full search runs.
  let edits = shortestEdit(
    head,
    n - tail,
    head,
    m - tail,
    same,
    Math.min(FIRST_SEARCH, maxChanges),
  );
  if (edits === undefined && maxChanges > FIRST_SEARCH) {
    const ids = internMiddle(bLines, bRefs, aLines, aRefs, head, tail);
    if (ids.unmatched > maxChanges) return undefined;
    // The long search compares interned ids: integers instead of strings.
    const { xs, ys } = ids;
    const sameId = (x: number, y: number) => xs[x - head] === ys[y - head];
    edits = shortestEdit(head, n - tail, head, m - tail, sameId, maxChanges);
  }
  if (edits === undefined) return undefined;

  const walk = new Walk(bLines, aLines);
  for (let i = 0; i < head; i++) walk.pair(i, i);
  let x = head;
  let y = head;
  for (let s = 0; s < edits.length; s += 3) {
    while (x < edits[s + 1]) walk.pair(x++, y++);
    if (edits[s] === REMOVED) walk.step(REMOVED, x++, -1);
    else walk.step(ADDED, -1, y++);
  }
  while (x < n) walk.pair(x++, y++);
  // A ref removed in one place and added in another is an element that moved: it is shown
  // once, as changed, at its new place, and its old line not at all (it still exists).
  const removedAt = new Map<number, number>();
  for (let s = 0; s < walk.kinds.length; s++) {
    if (walk.kinds[s] === REMOVED && bRefs[walk.bs[s]] >= 0) removedAt.set(bRefs[walk.bs[s]], s);
  }
  let changes = walk.kinds.length;
  for (let s = 0; s < walk.kinds.length && removedAt.size > 0; s++) {
    const from = walk.kinds[s] === ADDED ? removedAt.get(aRefs[walk.as[s]]) : undefined;
    if (from === undefined) continue;
    walk.kinds[from] = DROPPED;
    walk.kinds[s] = CHANGED;
    changes--;
  }
  if (changes > maxChanges) return undefined;

  const diff: ViewDiff = { docId: after.docId, added: 0, removed: 0, changed: 0, hunks: [] };
  if (before.title !== after.title) diff.title = after.title;
  if (before.path !== after.path) diff.path = after.path;
  let hunk: DiffLine[] = [];
  let hunkId = -1;
  for (let s = 0; s < walk.kinds.length; s++) {
    const kind = walk.kinds[s];
    if (kind === DROPPED) continue;
    const a = walk.as[s];
    const b = walk.bs[s];
    if (walk.hunkOf[s] !== hunkId) {
      hunkId = walk.hunkOf[s];
      hunk = [];
      diff.hunks.push(hunk);
      // Locate the hunk by what encloses its first line; a removed line's parent is found
      // in the old view and shown as it reads now, if it is still there.
      let ctx = -1;
      if (a >= 0) ctx = enclosingLine(aLines, a);
      else {
        const up = enclosingLine(bLines, b);
        if (up >= 0) ctx = walk.bToA[up];
      }
      if (ctx < 0) ctx = walk.aboveA[s];
      if (ctx >= 0) hunk.push(diffLine("context", aLines[ctx]));
    }
    if (kind === ADDED) {
      diff.added++;
      hunk.push(diffLine("added", aLines[a]));
    } else if (kind === REMOVED) {
      diff.removed++;
      hunk.push(diffLine("removed", bLines[b]));
    } else {
      diff.changed++;
      hunk.push(diffLine("changed", aLines[a]));
    }
  }
  return diff;
}

function diffLine(op: DiffOp, text: string): DiffLine {
  const ref = lineRefNumber(text);
  return ref < 0 ? { op, text } : { op, text, ref: `e${ref}` };
}

/**
 * The steps of the diff in page order. Only changes are stored (with the hunk they belong
 * to and the unchanged line above them); unchanged pairs only update `bToA`, so a large
 * page with a few changes allocates next to nothing.
 */
class Walk {
  readonly kinds: number[] = [];
  readonly bs: number[] = [];
  readonly as: number[] = [];
  readonly hunkOf: number[] = [];
  readonly aboveA: number[] = [];
  /** After index of each unchanged or changed before line, else -1. */
  readonly bToA: Int32Array;
  #hunk = 0;
  #open = false;
  #lastEqualA = -1;

  constructor(readonly bLines: string[], readonly aLines: string[]) {
    this.bToA = new Int32Array(bLines.length).fill(-1);
  }

  /** Two matched lines: unchanged, or the same element with new text. */
  pair(b: number, a: number): void {
    if (this.bLines[b] !== this.aLines[a]) return this.step(CHANGED, b, a);
    this.bToA[b] = a;
    this.#lastEqualA = a;
    if (this.#open) {
      this.#open = false;
      this.#hunk++;
    }
  }

  step(kind: number, b: number, a: number): void {
    this.kinds.push(kind);
    this.bs.push(b);
    this.as.push(a);
    this.hunkOf.push(this.#hunk);
    this.aboveA.push(this.#lastEqualA);
    if (b >= 0 && a >= 0) this.bToA[b] = a;
    this.#open = true;
  }
}

/**
 * Ids of the lines of before[head, n-tail) and after[head, m-tail), equal when the lines
 * match (same ref, or same text), and a lower bound on the edits between them: lines
 * without an equal twin on the other side must each be added or removed.
 */
function internMiddle(
  bLines: string[],
  bRefs: Int32Array,
  aLines: string[],
  aRefs: Int32Array,
  head: number,
  tail: number,
): { xs: Int32Array; ys: Int32Array; unmatched: number } {
  const ids = new Map<string | number, number>();
  const intern = (lines: string[], refs: Int32Array): Int32Array => {
    const out = new Int32Array(Math.max(lines.length - tail - head, 0));
    for (let i = 0; i < out.length; i++) {
      const key = refs[head + i] >= 0 ? refs[head + i] : lines[head + i];
      let id = ids.get(key);
      if (id === undefined) ids.set(key, id = ids.size);
      out[i] = id;
    }
    return out;
  };
  const xs = intern(bLines, bRefs);
  const ys = intern(aLines, aRefs);
  const balance = new Int32Array(ids.size);
  for (const id of xs) balance[id]++;
  for (const id of ys) balance[id]--;
  let unmatched = 0;
  for (const v of balance) unmatched += Math.abs(v);
  return { xs, ys, unmatched };
}

/**
 * Per line of each view, the number of its ref, or -1 for text and for refs on more than
 * one line of either view.
 */
function refKeys(bLines: string[], aLines: string[]): [Int32Array, Int32Array] {
  const twice = new Set<number>();
  const scan = (lines: string[]): Int32Array => {
    const out = new Int32Array(lines.length);
    const seen = new Set<number>();
    for (let i = 0; i < lines.length; i++) {
      const ref = out[i] = lineRefNumber(lines[i]);
      if (ref < 0) continue;
      if (seen.has(ref)) twice.add(ref);
      seen.add(ref);
    }
    return out;
  };
  const keys: [Int32Array, Int32Array] = [scan(bLines), scan(aLines)];
  if (twice.size > 0) {
    for (const k of keys) for (let i = 0; i < k.length; i++) if (twice.has(k[i])) k[i] = -1;
  }
  return keys;
}

/**
 * The line enclosing line `i`, or -1: the nearest line above that is its parent by
 * indentation (two spaces a level), a heading of a higher level, or the `[frame …]` line it
 * sits in (frames scope headings and parents). Looked up only for a hunk's first line, at
 * most {@link CONTEXT_SCAN_LINES} up.
 */
function enclosingLine(lines: string[], i: number): number {
  const own = lines[i];
  const indent = leadingSpaces(own);
  const level = headingLevelOf(own, indent);
  const closing = frameMarker(own, indent) === -1;
  let depth = 0; // frames closed between line i and the line looked at
  for (let j = i - 1; j >= Math.max(0, i - CONTEXT_SCAN_LINES); j--) {
    const line = lines[j];
    const ind = leadingSpaces(line);
    const frame = frameMarker(line, ind);
    if (frame === -1) depth++;
    else if (frame === 1 && depth-- === 0) return j;
    if (depth > 0 || frame !== 0 || closing) continue;
    if (ind < indent) return j;
    const h = headingLevelOf(line, ind);
    if (h > 0 && ind === indent && (level === 0 || h < level)) return j;
  }
  return -1;
}
