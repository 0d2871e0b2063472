/**
 * How a snapshot diff reads to the model: a runtime summary line, then the hunks inside the
 * page's untrusted block (`+` added, `-` removed, `~` changed, ` ` context), a run of
 * removed lines as one line naming the refs gone, a text line replaced in place as one
 * changed line, and the field the action typed into left out when it reads what was typed.
 *
 * Every page string the diff shows is redacted before it is shortened (a removed line to
 * its first characters, a context line to 80): the views' lines were redacted when they
 * were built, and are again here, so a value added since is not cut into pieces either.
 *
 * @module
 */
import { processRedactor, redactCut, type Redactor } from "../redact/mod.ts";
import { DIFF_MAX_CHANGES, type DiffLine, type DiffOp, diffViews, type ViewDiff } from "./diff.ts";
import {
  BRIEF_TEXT_CHARS,
  endsWithValue,
  frameMarker,
  lineRefNumber,
  refAndRole,
} from "./outline_line.ts";
import {
  CHARS_PER_TOKEN,
  DEFAULT_MAX_TOKENS,
  type PageView,
  renderPage,
  tabLabel,
} from "./page_view.ts";
import { oneLine as keptOnOneLine } from "./line_escape.ts";
import { refSpan } from "./ref_span.ts";
import { neutralize, untrustedClose, untrustedOpen } from "./untrusted.ts";

/** Context lines are cut to this: they locate a hunk, they are not content. */
export const CONTEXT_CHARS = 80;

/** Removed text lines are cut to this (the agent read them in full already). */
export const REMOVED_TEXT_CHARS = BRIEF_TEXT_CHARS;

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
        const frame = frameMarker(l.text) === 1;
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
  const expected = new Map(typed.map((t) => [t.ref, t.value]));
  let dropped = 0;
  const hunks = diff.hunks.map((hunk) => {
    const kept = hunk.filter((l) => {
      const value = l.op === "changed" && l.ref ? expected.get(l.ref) : undefined;
      const drop = value !== undefined && endsWithValue(l.text, value);
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
  return neutralize(keptOnOneLine(text));
}

const PREFIX: Record<DiffOp, string> = { added: "+", removed: "-", changed: "~", context: " " };

/**
 * An element line keeps its ref and role, a text line its first characters; the line is
 * redacted before either is cut from it.
 */
function shortenRemoved(line: string, redactor: Redactor): string {
  const text = redactor.redact(line);
  if (lineRefNumber(text) >= 0) return refAndRole(text);
  const lead = /^ *(?:- )?/.exec(text)?.[0] ?? "";
  return lead + redactCut(text.slice(lead.length), REMOVED_TEXT_CHARS, { redactor });
}
