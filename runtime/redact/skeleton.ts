/**
 * A text's *skeleton* (its letters and digits only, case-folded and compatibility-decomposed,
 * each mapped back to the character it came from) and the rolling-hash table of a value's
 * runs searched for in it. Split from `redactor.ts`: this is the *runs* matcher, the one
 * that finds a value lower-cased, letter-spaced, split by invisible characters or cut.
 *
 * @module
 */

/**
 * How many consecutive characters of a value (letters and digits, case-folded, separators
 * left out) count as the value. A cut, a split line or a shortened name leaves a piece of a
 * password; eight characters of one are specific enough not to occur in ordinary text by
 * chance, and a value shorter than this must be found whole.
 */
export const PARTIAL_RUN_LENGTH = 8;

/** ASCII folded: a letter's lower case, a digit itself, -1 for a separator. */
const ASCII_FOLD = (() => {
  const t = new Int16Array(128).fill(-1);
  for (let c = 48; c <= 57; c++) t[c] = c;
  for (let c = 65; c <= 90; c++) t[c] = c + 32;
  for (let c = 97; c <= 122; c++) t[c] = c;
  return t;
})();

const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
/** Folded non-ASCII code points; bounded, since a page can send every code point there is. */
const FOLDED = new Map<number, string>();
const FOLDED_MAX = 65_536;

/**
 * What a non-ASCII code point is in a skeleton: its compatibility decomposition
 * (fullwidth, ligatures, accented letters split from their marks), lower-cased, letters and
 * digits only. Empty for a separator: spaces, punctuation, symbols, combining marks,
 * format characters (zero-width, bidi controls, soft hyphen), controls, lone surrogates.
 */
function foldCodePoint(cp: number): string {
  let folded = FOLDED.get(cp);
  if (folded !== undefined) return folded;
  folded = "";
  for (const ch of String.fromCodePoint(cp).normalize("NFKD").toLowerCase()) {
    if (LETTER_OR_NUMBER.test(ch)) folded += ch;
  }
  if (FOLDED.size >= FOLDED_MAX) FOLDED.clear();
  FOLDED.set(cp, folded);
  return folded;
}

/** The skeleton of a value: what `Skeleton.build` would hold for it, as a string. */
export function skeletonOf(value: string): string {
  let out = "";
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if (c < 128) {
      const f = ASCII_FOLD[c];
      if (f >= 0) out += String.fromCharCode(f);
    } else out += foldCodePoint(c);
  }
  return out;
}

/** The UTF-16 length of the code point at `i` (2 for a surrogate pair). */
export function widthAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return 1;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
}

/** Buffers larger than this are not kept between calls (a huge page's line). */
const KEEP_UNITS = 1 << 20;

/**
 * A text's skeleton: its letters and digits case-folded (`units`), each with the index in
 * the text of the character it came from (`from`). The buffers are reused across calls.
 */
export class Skeleton {
  /** The folded letters and digits (the first `length` are in use). */
  units = new Uint16Array(1_024);
  /** For each unit, the index in the text of the character it came from. */
  from = new Int32Array(1_024);
  /** How many units the skeleton holds. */
  length = 0;

  /** Fills the buffers with `text`'s skeleton (the previous one is overwritten). */
  build(text: string): void {
    this.length = 0;
    this.#reserve(text.length);
    const n = text.length;
    for (let i = 0; i < n;) {
      const c = text.charCodeAt(i);
      if (c < 128) {
        const f = ASCII_FOLD[c];
        if (f >= 0) {
          this.units[this.length] = f;
          this.from[this.length++] = i;
        }
        i++;
        continue;
      }
      const w = widthAt(text, i);
      const folded = foldCodePoint(w === 2 ? text.codePointAt(i)! : c);
      if (folded.length > 0) {
        // A decomposition can be longer than its character (`ﬃ` is three letters).
        this.#reserve(this.length + folded.length + (n - i));
        for (let k = 0; k < folded.length; k++) {
          this.units[this.length] = folded.charCodeAt(k);
          this.from[this.length++] = i;
        }
      }
      i += w;
    }
  }

  /** Lets go of a buffer only a huge text needed. */
  release(): void {
    if (this.units.length <= KEEP_UNITS) return;
    this.units = new Uint16Array(1_024);
    this.from = new Int32Array(1_024);
  }

  #reserve(size: number): void {
    if (size <= this.units.length) return;
    const cap = Math.max(size, this.units.length * 2);
    const units = new Uint16Array(cap);
    const from = new Int32Array(cap);
    units.set(this.units.subarray(0, this.length));
    from.set(this.from.subarray(0, this.length));
    this.units = units;
    this.from = from;
  }
}

const HASH_BASE = 0x01000193;
/** Bits of the prefilter a hash is looked up in before the map (most positions stop there). */
const FILTER_BITS = 20;

/** The runs of one length every value is searched for, by rolling hash. */
export class RunTable {
  /** The length (UTF-16 units) of every run in this table. */
  readonly length: number;
  /** HASH_BASE ** (length - 1), to take the oldest unit out of a rolling hash. */
  readonly #power: number;
  readonly #byHash = new Map<number, string[]>();
  readonly #filter = new Uint32Array(1 << (FILTER_BITS - 5));

  constructor(length: number) {
    this.length = length;
    let p = 1;
    for (let i = 1; i < length; i++) p = Math.imul(p, HASH_BASE);
    this.#power = p;
  }

  /** Adds one run (of this table's length) to search for; a run held already is kept once. */
  add(run: string): void {
    let h = 0;
    for (let i = 0; i < run.length; i++) h = (Math.imul(h, HASH_BASE) + run.charCodeAt(i)) | 0;
    const list = this.#byHash.get(h);
    if (list?.includes(run)) return;
    if (list) list.push(run);
    else this.#byHash.set(h, [run]);
    const bit = h & ((1 << FILTER_BITS) - 1);
    this.#filter[bit >>> 5] |= 1 << (bit & 31);
  }

  /** Pushes `[start, end)` skeleton ranges of every run of this table found in `sk`. */
  scan(sk: Skeleton, out: number[]): void {
    const k = this.length;
    const n = sk.length;
    if (n < k) return;
    const u = sk.units;
    const filter = this.#filter;
    const mask = (1 << FILTER_BITS) - 1;
    let h = 0;
    for (let i = 0; i < k; i++) h = (Math.imul(h, HASH_BASE) + u[i]) | 0;
    for (let p = 0;; p++) {
      const bit = h & mask;
      if ((filter[bit >>> 5] & (1 << (bit & 31))) !== 0 && this.#verify(h, u, p)) {
        out.push(p, p + k);
      }
      if (p + k >= n) break;
      h = (Math.imul((h - Math.imul(u[p], this.#power)) | 0, HASH_BASE) + u[p + k]) | 0;
    }
  }

  #verify(h: number, u: Uint16Array, p: number): boolean {
    const list = this.#byHash.get(h);
    if (!list) return false;
    next: for (const run of list) {
      for (let j = 0; j < run.length; j++) if (run.charCodeAt(j) !== u[p + j]) continue next;
      return true;
    }
    return false;
  }
}
