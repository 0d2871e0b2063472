/**
 * The one way page text is shortened for the model: redacted first, then cut. A cut made
 * before redaction leaves a piece of a password that no longer matches it (a 24-character
 * password cut to 19 characters is 19 characters of it); redacting the whole string first
 * means a cut can only ever fall in text that is already `[redacted]` or is no secret.
 *
 * @module
 */
import { processRedactor } from "./process_redactor.ts";
import type { Redactor } from "./redactor.ts";
import { PARTIAL_RUN_LENGTH } from "./skeleton.ts";

/**
 * How much of a giant string is read before it is redacted and cut to `max`: `max * 4`
 * (room for whitespace a normalizer folds away) plus this margin, so a value that
 * straddles the cut is read whole. Past the bound nothing can be shown; only a piece of a
 * value shorter than `PARTIAL_RUN_LENGTH` can end the bounded read, and it is cut off
 * before it can be shown unless whitespace collapses the text to under `max`.
 */
export const CUT_READ_MARGIN = 256;

/** How {@link redactCut} reads, rewrites and cuts. */
export interface CutOptions {
  /** The redactor to use; the process's one by default. */
  redactor?: Redactor;
  /**
   * Rewrites the redacted text before it is cut (collapses whitespace, escapes newlines,
   * drops URL queries): runs after redaction, so it cannot split a value before it is found.
   */
  rewrite?: (text: string) => string;
}

/**
 * `text` as it may be shown in at most `max` characters: bounded (a giant string is read
 * only as far as a cut at `max` can matter), every held secret redacted, `rewrite` applied,
 * then cut with `…` when it is longer than `max` or was bounded.
 */
export function redactCut(text: string, max: number, options: CutOptions = {}): string {
  const { redactor = processRedactor(), rewrite } = options;
  const limit = max * 4 + CUT_READ_MARGIN;
  const bounded = text.length > limit ? text.slice(0, limit) : text;
  const redacted = boundedRedact(bounded, bounded.length < text.length, redactor);
  const shown = rewrite ? rewrite(redacted) : redacted;
  return shown.length > max || bounded.length < text.length
    ? `${shown.slice(0, Math.max(max - 1, 0))}…`
    : shown;
}

/**
 * `text` redacted; when it was cut from something longer (`bounded`), without its last
 * `PARTIAL_RUN_LENGTH - 1` characters: the cut can only leave a piece of a value at the very
 * end, too short to be found, and a rewrite that shortens the text (whitespace, a dropped
 * URL query) would bring that piece into view.
 */
export function boundedRedact(text: string, bounded: boolean, redactor: Redactor): string {
  const redacted = redactor.redact(text);
  return bounded
    ? redacted.slice(0, Math.max(redacted.length - (PARTIAL_RUN_LENGTH - 1), 0))
    : redacted;
}

/** Whitespace runs as one space, trimmed: how names and values read in an outline. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** {@link redactCut} with whitespace collapsed: a name or value of an outline line. */
export function redactClip(text: string, max: number, redactor?: Redactor): string {
  return redactCut(text, max, { redactor, rewrite: collapseWhitespace });
}
