/**
 * Secret values and the encodings they are found in, turned into `[redacted]`.
 *
 * Two matchers run over every text, and what either finds is replaced:
 *
 * - **Runs** (the value as a page shows it): the text's *skeleton* is its letters and
 *   digits only, case-folded and compatibility-decomposed (`Ｓ`, `S`, `s` and `ś` are one
 *   letter), with everything else left out: whitespace, punctuation, symbols, combining
 *   marks and invisible format characters (zero-width, bidi controls, soft hyphen). Any run
 *   of `PARTIAL_RUN_LENGTH` (8) consecutive skeleton characters of a value, forwards or
 *   backwards, is a match, and so is a whole value whose skeleton is shorter than that.
 *   A match is found by a rolling hash over the skeleton against a set of the values'
 *   runs, and mapped back to the original text: the span from its first to its last
 *   character becomes `[redacted]`, separators inside it included. So a password
 *   lower-cased in a host name, letter-spaced, split by zero-width characters or cut in
 *   the middle (8 characters or more of it left) is still found.
 * - **Forms** (the value as an encoder writes it, see `secretForms()`): one RegExp whose
 *   alternatives are sorted longest first, so a full base64 encoding wins over its core
 *   and a URL-encoded form over the raw substring it contains. Only hex digits (hex,
 *   `%XX`, `&#xNN;`, `\uXXXX`, `\xNN`) match in either case: an encoding is matched whole,
 *   as the encoder wrote it.
 *
 * Values shorter than `MIN_SECRET_LENGTH` characters are not redacted at all: a one-letter
 * secret would blank every page, and a value that short is not kept secret by redaction
 * anyway. A value whose skeleton is shorter than that (mostly punctuation) is found by its
 * forms only.
 *
 * The forms are built in `secret_forms.ts`, the skeleton and its runs in `skeleton.ts`; this
 * file holds the values and joins both matchers.
 *
 * @module
 */

import { domainToUnicode } from "node:url";
import { formsOf, MIN_SECRET_LENGTH } from "./secret_forms.ts";
import { PARTIAL_RUN_LENGTH, RunTable, Skeleton, skeletonOf, widthAt } from "./skeleton.ts";

/** What every found form of a secret becomes. */
export const REDACTED = "[redacted]";

/**
 * Holds secret values and blanks every form of them in text. Values only accumulate: a
 * secret that was once known may still be on a page, in a URL or in a log after it leaves
 * the vault.
 */
export class Redactor {
  #values = new Set<string>();
  /** Values matched whole only (their forms and their whole skeleton), never by a run. */
  #whole = new Set<string>();
  #matcher: RegExp | undefined;
  #runs: RunTable[] = [];
  #stale = false;
  readonly #skeleton = new Skeleton();

  /**
   * Adds values (a single string is one value, not its characters); values already held
   * and values shorter than `MIN_SECRET_LENGTH` change nothing. Returns how many were new.
   * `wholeOnly` values are found whole (in every form, case folded, separators ignored) but
   * not by a run of 8 of their characters: a username or an e-mail address, whose pieces
   * (a domain) are ordinary text on the pages that know the user. A value added both ways
   * is matched by its runs.
   */
  add(values: Iterable<string>, options: { wholeOnly?: boolean } = {}): number {
    const list = typeof values === "string" ? [values] : values;
    let added = 0;
    for (const v of list) {
      if (typeof v !== "string") continue;
      if (this.#values.has(v)) {
        if (!options.wholeOnly && this.#whole.delete(v)) this.#stale = true;
        continue;
      }
      if ([...v].length < MIN_SECRET_LENGTH) continue;
      this.#values.add(v);
      if (options.wholeOnly) this.#whole.add(v);
      added++;
    }
    // The matchers are rebuilt once, at the next redact(), however many values came in.
    if (added > 0) this.#stale = true;
    return added;
  }

  /** Whether `value` is held. */
  has(value: string): boolean {
    return this.#values.has(value);
  }

  /** How many values are held. */
  get size(): number {
    return this.#values.size;
  }

  /** Whether no value is held (then `redact()` returns its input as is). */
  get empty(): boolean {
    return this.#values.size === 0;
  }

  /**
   * `text` with every run of 8 characters of a held value (case-folded, separators and
   * invisible characters between them ignored; a value shorter than that whole), and every
   * encoded form of one, replaced by `[redacted]`. Overlapping matches become one.
   */
  redact(text: string): string {
    if (this.#values.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    const spans = this.#spans(text);
    // A host name a browser shows in punycode (`xn--…`) is decoded and searched again: the
    // encoding keeps a value's ASCII letters but no run of them.
    if (/xn--/i.test(text)) {
      for (const m of text.matchAll(/xn--[a-z0-9-]+/gi)) {
        const label = m[0].replace(/-+$/, "");
        let decoded: string;
        try {
          decoded = domainToUnicode(label);
        } catch {
          continue;
        }
        if (decoded && decoded !== label && this.#spans(decoded).length > 0) {
          spans.push(m.index, m.index + label.length);
        }
      }
    }
    if (spans.length === 0) return text;
    return replaceSpans(text, spans);
  }

  /** The `[start, end)` spans of every form and run of a held value in `text`. */
  #spans(text: string): number[] {
    const re = this.#regex();
    const spans: number[] = [];
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      spans.push(m.index, m.index + m[0].length);
      // Forms of two values can overlap ("hunter22" and "r22xyz" in "hunter22xyz"): the
      // scan restarts one character after each match start, and overlaps merge below.
      re.lastIndex = m.index + 1;
    }
    this.#findRuns(text, spans);
    return spans;
  }

  /** Pushes the text spans of every run of a value found in `text`'s skeleton. */
  #findRuns(text: string, spans: number[]): void {
    if (this.#runs.length === 0) return;
    const sk = this.#skeleton;
    sk.build(text);
    const found: number[] = [];
    for (const table of this.#runs) table.scan(sk, found);
    for (let i = 0; i < found.length; i += 2) {
      const last = sk.from[found[i + 1] - 1];
      spans.push(sk.from[found[i]], last + widthAt(text, last));
    }
    sk.release();
  }

  #regex(): RegExp {
    if (this.#matcher && !this.#stale) return this.#matcher;
    const byPattern = new Map<string, number>();
    const tables = new Map<number, RunTable>();
    for (const v of this.#values) {
      for (const f of formsOf(v)) byPattern.set(f.pattern, f.text.length);
      const sk = [...skeletonOf(v)];
      if (sk.length < MIN_SECRET_LENGTH) continue;
      // Runs of code points; a hash runs over UTF-16 units, so a run is measured in those.
      const k = this.#whole.has(v) ? sk.length : Math.min(sk.length, PARTIAL_RUN_LENGTH);
      for (const letters of [sk, [...sk].reverse()]) {
        for (let i = 0; i + k <= letters.length; i++) {
          const run = letters.slice(i, i + k).join("");
          let table = tables.get(run.length);
          if (!table) tables.set(run.length, table = new RunTable(run.length));
          table.add(run);
        }
      }
    }
    const patterns = [...byPattern].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    this.#matcher = new RegExp(patterns.map(([p]) => p).join("|"), "g");
    this.#runs = [...tables.values()];
    this.#stale = false;
    return this.#matcher;
  }
}

/** `text` with the spans (flat `[start, end)` pairs, any order) replaced; overlaps merge. */
function replaceSpans(text: string, spans: number[]): string {
  const order = Array.from({ length: spans.length / 2 }, (_, i) => i)
    .sort((a, b) => spans[2 * a] - spans[2 * b] || spans[2 * b + 1] - spans[2 * a + 1]);
  let out = "";
  let kept = 0;
  let start = -1;
  let end = -1;
  for (const i of order) {
    const s = spans[2 * i];
    const e = spans[2 * i + 1];
    if (s < end) {
      end = Math.max(end, e);
      continue;
    }
    if (end >= 0) {
      out += text.slice(kept, start) + REDACTED;
      kept = end;
    }
    start = s;
    end = e;
  }
  return out + text.slice(kept, start) + REDACTED + text.slice(end);
}
