/**
 * Which outline lines `browser_find` shows: every line holding the searched text
 * (case-insensitive, its ref token aside), with the lines of context asked for either side
 * and then the nearest heading above it, runs of shown lines joined and the lines between
 * them left out as `...`; or the control of one role and accessible name, exactly
 * ({@link controlLines}). Pure: the session scans, this selects, `renderPage()` frames the
 * result like a snapshot page.
 *
 * @module
 */
import { headingLevelOf, splitRef } from "../snapshot/mod.ts";

/** Stands for the lines left out between two shown runs. */
export const GAP = "...";
/** Lines of context shown on each side of a matching line unless a search says. */
export const CONTEXT_LINES = 1;

/** How much one search may show. */
export interface FindLimits {
  /** Matching lines shown at most (the first ones, in outline order). */
  maxResults: number;
  /**
   * Characters of shown lines at most: a match whose lines would pass it is left out, the
   * first one aside (a line is at most `LINE_MAX`, so one match always fits a reply).
   */
  maxChars: number;
  /**
   * Lines shown on each side of a match ({@link CONTEXT_LINES} by default); with any, the
   * heading above the match too. 0: the matching lines alone.
   */
  context?: number;
}

/** What a search found. */
export interface FoundLines {
  /** The lines to show, in outline order, {@link GAP} between runs that do not touch. */
  lines: string[];
  /** How many lines match. */
  total: number;
  /** How many matches are shown with their context (the first ones). */
  shown: number;
}

/**
 * The search text as lines are compared with it: lower-cased, and whitespace collapsed as
 * the outline collapses page whitespace (so `"Add  to cart"` finds `Add to cart`).
 */
export function findNeedle(text: string): string {
  return text.replace(/\s+/g, " ").toLowerCase();
}

/**
 * The lines of `lines` (a view's whole outline) that `browser_find` shows for `text`. A line
 * matches on what it says (role, name, value, text, link target), never on its ref token:
 * `e1` is not a word of the page.
 */
export function findLines(
  lines: readonly string[],
  text: string,
  limits: FindLimits,
): FoundLines {
  const needle = findNeedle(text);
  const matches: { at: number; heading: number }[] = [];
  let heading = -1;
  for (let i = 0; i < lines.length; i++) {
    if (searchable(lines[i]).toLowerCase().includes(needle)) matches.push({ at: i, heading });
    if (headingLevelOf(lines[i]) > 0) heading = i;
  }
  const picked = new Set<number>();
  const context = limits.context ?? CONTEXT_LINES;
  let chars = 0;
  let shown = 0;
  for (const m of matches) {
    if (shown >= limits.maxResults) break;
    const from = Math.max(m.at - context, 0);
    const to = Math.min(m.at + context, lines.length - 1);
    const wanted: number[] = [];
    // The heading the match is under, unless the context shows it already (or none is asked).
    if (context > 0 && m.heading >= 0 && m.heading < from) wanted.push(m.heading);
    for (let i = from; i <= to; i++) wanted.push(i);
    const fresh = wanted.filter((i) => !picked.has(i));
    const cost = fresh.reduce((n, i) => n + lines[i].length + 1, 0);
    if (shown > 0 && chars + cost > limits.maxChars) break;
    for (const i of fresh) picked.add(i);
    chars += cost;
    shown++;
  }
  const out: string[] = [];
  let prev = -1;
  for (const i of [...picked].sort((a, b) => a - b)) {
    if (prev >= 0 && i > prev + 1) out.push(GAP);
    out.push(lines[i]);
    prev = i;
  }
  return { lines: out, total: matches.length, shown };
}

/**
 * The element lines of `lines` whose control is `role` and whose accessible name is `name`,
 * both exactly (the role as lines write it: `button`, `textbox`, `link` for a link, whose line
 * has no role word; the name as the page gives it, after the outline's whitespace collapsing
 * and its cut at `NAME_MAX`). Page text shaped like an element line is escaped in the outline,
 * so it is never one of them.
 */
export function controlLines(lines: readonly string[], role: string, name: string): string[] {
  return lines.filter((line) => {
    const c = controlOf(line);
    return c !== undefined && c.role === role && c.name === name;
  });
}

/** A control line's role and name as `controlLine()` wrote them; undefined for other lines. */
export function controlOf(line: string): { role: string; name: string } | undefined {
  const parts = splitRef(line);
  if (!parts) return undefined;
  // A link: its quoted name or its arrow right after the ref (no role word).
  const m = /^ (?:([A-Za-z]+)(?= |$))?(?: ?("(?:[^"\\]|\\.)*"))?/.exec(parts.rest);
  if (!m) return undefined;
  let name = "";
  try {
    if (m[2]) name = JSON.parse(m[2]);
  } catch {
    return undefined;
  }
  const role = m[1] ?? "link";
  return { role, name };
}

/** A line as it is searched: without its `[e12]` token. */
function searchable(line: string): string {
  const parts = splitRef(line);
  return parts ? parts.lead + parts.rest : line;
}
