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
 * Every page string the diff shows is redacted before it is shortened (a removed line to
 * its first characters, a context line to 80): the views' lines were redacted when they
 * were built, and are again here, so a value added since is not cut into pieces either.
 *
 * @module
 */
import { processRedactor, redactCut, type Redactor } from "../redact/mod.ts";
import { BRIEF_TEXT_CHARS } from "./outline.ts";
import {
  CHARS_PER_TOKEN,
  DEFAULT_MAX_TOKENS,
  type PageView,
  renderPage,
  tabLabel,
} from "./page_view.ts";
import { refSpan } from "./ref_span.ts";
import { neutralize, untrustedClose, untrustedOpen } from "./untrusted.ts";

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
/** Removed text lines are cut to this (the agent read them in full already). */
export const REMOVED_TEXT_CHARS = BRIEF_TEXT_CHARS;
/** Context lines are cut to this: they locate a hunk, they are not content. */
export const CONTEXT_CHARS = 80;
/** How far up a hunk's enclosing heading or parent is looked for (bounds the cost per hunk). */
export const CONTEXT_SCAN_LINES = 2_000;

/** Ref and role of an element line, the shortened form of a removed element. */
const REF_ROLE = /^( *(?:- )?\[e\d+\](?: \S+)?)/;

const ADDED = 1;
const REMOVED = 2;
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

/**
 * The text the model gets after an action: a runtime summary line, then the hunks inside
 * the page's untrusted block (`+` added, `-` removed, `~` changed, ` ` context, each
 * followed by a space). `undefined` means "send the full page instead": another document,
 * or a diff longer than the full first page would be, or over `maxTokens`.
 */
export function renderDiff(
  before: PageView,
  after: PageView,
  maxTokens: number = DEFAULT_MAX_TOKENS,
  typed: readonly TypedValue[] = [],
  redactor: Redactor = processRedactor(),
): string | undefined {
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  // A shown change costs at least 4 characters ("+ x\n"), so this cap refuses (almost)
  // only diffs that could not fit anyway; it also bounds the search on small budgets.
  const maxChanges = Math.min(DIFF_MAX_CHANGES, Math.floor(maxChars / 4));
  const diff = diffViews(before, after, { maxChanges });
  if (!diff) return undefined;
  const text = formatDiff(diff, after, typed, redactor);
  if (text.length > maxChars) return undefined;
  if (text.length > renderPage(after, 1, maxTokens).text.length) return undefined;
  return text;
}

/**
 * Formats a diff of `after` (its nonce, origin, doc and tab go on the markers and status
 * line). It applies no size rule: use {@link renderDiff} unless the caller checks sizes.
 * Page text is redacted with `redactor` before it is shortened.
 */
export function formatDiff(
  given: ViewDiff,
  after: PageView,
  typed: readonly TypedValue[] = [],
  redactor: Redactor = processRedactor(),
): string {
  const shownText = (text: string) => oneLine(redactor.redact(text));
  const replaced = withReplacedText(given);
  const diff = withoutTyped(replaced, typed);
  const counts = diff.added + diff.removed + diff.changed;
  if (counts === 0 && diff.title === undefined && diff.path === undefined) {
    const other = diff.changed !== replaced.changed ? " other" : "";
    return `no${other} changes since your last view (doc ${after.docId})`;
  }
  const counts_ = [
    [diff.added, "added"],
    [diff.removed, "removed"],
    [diff.changed, "changed"],
  ] as const;
  let summary = counts_.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`).join(", ");
  const more = [
    ...(diff.path !== undefined ? ["path changed"] : []),
    ...(diff.title !== undefined ? ["title changed"] : []),
  ];
  summary = [...(summary ? [summary] : []), ...more].join(", ");
  const parts = [
    `doc ${after.docId}${tabLabel(after)} · changes since your last view: ${summary}`,
    // The same document as the view it changes, so the same origin: the marker of that view
    // named it already.
    untrustedOpen("page", after.nonce),
  ];
  if (diff.path !== undefined) parts.push(`~ path: ${shownText(diff.path)}`);
  if (diff.title !== undefined) parts.push(`~ title: ${shownText(diff.title)}`);
  let lastContext: string | undefined;
  for (const hunk of diff.hunks) {
    for (let i = 0; i < hunk.length; i++) {
      const l = hunk[i];
      if (l.op === "context") {
        // An element line that changed is located by its ref; it needs no context, unless
        // the context says which frame it is in.
        const frame = l.text.trimStart().startsWith("[frame ");
        if (i === 0 && !frame && hunk[1]?.op === "changed" && hunk[1].ref) continue;
        // Hunks under one heading: the heading once, then a gap mark.
        const shown = redactCut(l.text, CONTEXT_CHARS, { redactor });
        parts.push(shown === lastContext ? "  …" : `  ${shownText(shown)}`);
        lastContext = shown;
        continue;
      }
      if (l.op === "removed") {
        // The agent read removed lines in full already: a run of them is one line naming
        // the refs that are gone, which is what the agent must stop using.
        let j = i;
        while (j + 1 < hunk.length && hunk[j + 1].op === "removed") j++;
        if (j > i) {
          const refs = hunk.slice(i, j + 1).flatMap((r) => r.ref ? [r.ref] : []);
          // In the block's own arrows, which page text cannot produce.
          parts.push(`- <<<${j - i + 1} lines gone${refs.length ? `: ${refSpan(refs)}` : ""}>>>`);
          i = j;
          continue;
        }
      }
      const shown = l.op === "removed" ? shortenRemoved(l.text, redactor) : l.text;
      parts.push(`${PREFIX[l.op]} ${shownText(shown)}`);
    }
  }
  parts.push(untrustedClose("page", after.nonce));
  return parts.join("\n");
}

/** A value the action itself typed into an element (see {@link renderDiff}). */
export interface TypedValue {
  ref: string;
  value: string;
}

/**
 * Leaves out the changed line of a field the action typed into when it now reads exactly the
 * typed value and nothing else changed on it: the action's result line says so already.
 */
function withoutTyped(diff: ViewDiff, typed: readonly TypedValue[]): ViewDiff {
  if (typed.length === 0) return diff;
  const expected = new Map(typed.map((t) => [t.ref, ` = ${JSON.stringify(t.value)}`]));
  let dropped = 0;
  const hunks = diff.hunks.map((hunk) => {
    const kept = hunk.filter((l) => {
      const tail = l.op === "changed" && l.ref ? expected.get(l.ref) : undefined;
      const drop = tail !== undefined && l.text.endsWith(tail);
      if (drop) dropped++;
      return !drop;
    });
    // A hunk left with its context line alone locates nothing.
    return kept.every((l) => l.op === "context") ? [] : kept;
  }).filter((h) => h.length > 0);
  if (dropped === 0) return diff;
  return { ...diff, hunks, changed: diff.changed - dropped };
}

/**
 * One text line replaced in the same place (a status line, a count; what is added after it
 * follows as `+`) reads as one changed line, `~ new text`: the agent has read the old one,
 * and a `-`/`+` pair would send it again.
 */
function withReplacedText(diff: ViewDiff): ViewDiff {
  let replaced = 0;
  const hunks = diff.hunks.map((hunk) => {
    const out: DiffLine[] = [];
    for (let i = 0; i < hunk.length; i++) {
      const l = hunk[i];
      const next = hunk[i + 1];
      if (
        l.op === "removed" && !l.ref && next?.op === "added" && !next.ref &&
        hunk[i - 1]?.op !== "removed"
      ) {
        out.push({ op: "changed", text: next.text });
        replaced++;
        i++;
        continue;
      }
      out.push(l);
    }
    return out;
  });
  if (replaced === 0) return diff;
  return {
    ...diff,
    hunks,
    added: diff.added - replaced,
    removed: diff.removed - replaced,
    changed: diff.changed + replaced,
  };
}

/**
 * Page text (redacted) as shown in the block: markers neutralized, and kept to one line,
 * since a line break would let page text begin a line that reads like a `+`/`~` diff line.
 */
function oneLine(text: string): string {
  return neutralize(text.replace(/[\r\n\u2028\u2029]+/g, " "));
}

const PREFIX: Record<DiffOp, string> = { added: "+", removed: "-", changed: "~", context: " " };

function diffLine(op: DiffOp, text: string): DiffLine {
  const ref = refNumber(text);
  return ref < 0 ? { op, text } : { op, text, ref: `e${ref}` };
}

/**
 * An element line keeps its ref and role, a text line its first characters; the line is
 * redacted before either is cut from it.
 */
function shortenRemoved(line: string, redactor: Redactor): string {
  const text = redactor.redact(line);
  if (refNumber(text) >= 0) return REF_ROLE.exec(text)?.[1] ?? text;
  const lead = /^ *(?:- )?/.exec(text)?.[0] ?? "";
  return lead + redactCut(text.slice(lead.length), REMOVED_TEXT_CHARS, { redactor });
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
 * The number of the ref an element line starts with (`[e12] …` → 12, after indentation and
 * an optional list bullet), or -1. Hand-parsed: it runs on every line of both views.
 */
function refNumber(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  if (line.charCodeAt(i) === 45 && line.charCodeAt(i + 1) === 32) i += 2; // "- "
  if (line.charCodeAt(i) !== 91 || line.charCodeAt(i + 1) !== 101) return -1; // "[e"
  let n = 0;
  let j = i + 2;
  for (let c = line.charCodeAt(j); c >= 48 && c <= 57; c = line.charCodeAt(++j)) {
    n = n * 10 + c - 48;
  }
  if (j === i + 2 || line.charCodeAt(j) !== 93) return -1; // "]"
  const after = line.charCodeAt(j + 1);
  return j + 1 === line.length || after === 32 ? n : -1;
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
      const ref = out[i] = refNumber(lines[i]);
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
 * Myers' shortest edit script from before[b0, b1) to after[a0, a1) under `same`, as flat
 * triples (op, x, y) in page order with absolute indices: REMOVED deletes before[x],
 * ADDED inserts after[y]. `undefined` if it needs more than `maxD` edits. Time
 * O((N+M)·D), memory O(D²) for the walk back.
 */
function shortestEdit(
  b0: number,
  b1: number,
  a0: number,
  a1: number,
  same: (x: number, y: number) => boolean,
  maxD: number,
): number[] | undefined {
  const n = b1 - b0;
  const m = a1 - a0;
  const max = Math.min(n + m, maxD);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] is v over k ∈ [-d-1, d+1] before step d, enough to walk back from step d.
  const trace: Int32Array[] = [];
  let found = -1;
  search: for (let d = 0; d <= max; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])
        ? v[off + k + 1]
        : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && same(b0 + x, a0 + y)) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break search;
      }
    }
  }
  if (found < 0) return undefined;
  const rev: number[] = [];
  let x = n;
  for (let d = found, y = m; d > 0; d--) {
    const vp = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && vp[k - 1 + d + 1] < vp[k + 1 + d + 1]);
    const pk = down ? k + 1 : k - 1;
    x = vp[pk + d + 1];
    y = x - pk;
    rev.push(down ? ADDED : REMOVED, b0 + x, a0 + y);
  }
  const out: number[] = [];
  for (let s = rev.length - 3; s >= 0; s -= 3) out.push(rev[s], rev[s + 1], rev[s + 2]);
  return out;
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
  const level = headingLevel(own, indent);
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
    const h = headingLevel(line, ind);
    if (h > 0 && ind === indent && (level === 0 || h < level)) return j;
  }
  return -1;
}

function leadingSpaces(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

/** 1-6 for a heading line (`# …`, also as a list item), else 0. */
function headingLevel(line: string, indent: number): number {
  let i = indent;
  if (line.charCodeAt(i) === 45 && line.charCodeAt(i + 1) === 32) i += 2;
  let n = 0;
  while (line.charCodeAt(i + n) === 35) n++;
  return n >= 1 && n <= 6 && line.charCodeAt(i + n) === 32 ? n : 0;
}

/** 1 for a `[frame …]` line, -1 for `[/frame]`, else 0. */
function frameMarker(line: string, indent: number): number {
  if (line.startsWith("[/frame]", indent) && line.length === indent + 8) return -1;
  return line.startsWith("[frame ", indent) && line.endsWith("]") ? 1 : 0;
}
