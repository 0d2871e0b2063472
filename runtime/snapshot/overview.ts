/**
 * The overview pages a long outline opens with: every heading and control, in a form cut to
 * what finding one's way needs. The full pages that follow list every line, and
 * `browser_find` returns any of them with its ref, so an overview may leave out what is
 * there in full:
 *
 * - a link that repeats an earlier link word for word (the same name to the same target,
 *   compared on the full lines): the first one's ref does what it does;
 * - long runs of links, folded into one line (`run_fold.ts`);
 * - every text line of a run but the first, already cut to its first characters;
 * - on each page, a foreign origin its links name more than once, written once in a runtime
 *   line (`<<<origins: @1 https://a.example, …>>>`) and as `@1` after each arrow.
 *
 * Lines arrive neutralized, so a page cannot write a runtime line of its own.
 *
 * @module
 */
import { foldLinkRuns } from "./run_fold.ts";
import { frameMarker, headingLevelOf, lineRefNumber, splitRef } from "./outline_line.ts";

/** An origin named at least this often on one page is written once and aliased. */
export const ALIAS_MIN_USES = 2;

/**
 * The overview's lines of an outline: `brief` is aligned with `lines` (an empty entry has no
 * overview form); both neutralized.
 */
export function overviewLines(lines: readonly string[], brief: readonly string[]): string[] {
  const seenLinks = new Set<string>();
  const kept: string[] = [];
  // The frames a line is in: a target is shown relative to its own frame's origin.
  const frames: string[] = [];
  brief.forEach((b, i) => {
    const line = lines[i] ?? "";
    const marker = frameMarker(line);
    if (marker === 1) frames.push(line.trim());
    if (marker === -1) frames.pop();
    if (b === "") return;
    const full = splitRef(line);
    // A link line's rest opens with its quoted name or its arrow (no role word); only a
    // link with a target repeats another for certain.
    if (full && /^ (?:"|-> )/.test(full.rest) && full.rest.includes(" -> ")) {
      const key = `${frames.join("\n")}\n${full.rest}`;
      if (seenLinks.has(key)) return;
      seenLinks.add(key);
    }
    kept.push(b);
  });
  return keepFirstText(foldLinkRuns(kept));
}

/** `lines` with every run of text lines cut to its first line. */
function keepFirstText(lines: readonly string[]): string[] {
  const out: string[] = [];
  let inText = false;
  for (const line of lines) {
    const text = isText(line);
    if (!(text && inText)) out.push(line);
    inText = text;
  }
  return out;
}

/** Page text: not an element, heading, frame marker or runtime line. */
function isText(line: string): boolean {
  return lineRefNumber(line) < 0 && headingLevelOf(line) === 0 && frameMarker(line) === 0 &&
    !line.trimStart().startsWith("<<<");
}

// The arrow of an overview line with a foreign origin after it, at the line's end.
const FOREIGN_ARROW = / -> (https?:\/\/[^\s/]+)$/;

/**
 * One overview page's lines with each foreign origin named {@link ALIAS_MIN_USES} times or
 * more written once, in a runtime line before them, and as `@N` after each arrow.
 */
export function aliasOrigins(page: readonly string[]): string[] {
  const uses = new Map<string, number>();
  for (const line of page) {
    const origin = isElement(line) ? FOREIGN_ARROW.exec(line)?.[1] : undefined;
    if (origin) uses.set(origin, (uses.get(origin) ?? 0) + 1);
  }
  const alias = new Map<string, string>();
  for (const [origin, n] of uses) {
    if (n >= ALIAS_MIN_USES) alias.set(origin, `@${alias.size + 1}`);
  }
  if (alias.size === 0) return [...page];
  const out = page.map((line) => {
    const m = isElement(line) ? FOREIGN_ARROW.exec(line) : null;
    const a = m && alias.get(m[1]);
    return a ? `${line.slice(0, m.index)} -> ${a}` : line;
  });
  const legend = [...alias].map(([origin, a]) => `${a} ${origin}`).join(", ");
  return [`<<<origins: ${legend}>>>`, ...out];
}

function isElement(line: string): boolean {
  return lineRefNumber(line) >= 0;
}
