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
 * @module
 */

import { domainToUnicode } from "node:url";

/** What every found form of a secret becomes. */
export const REDACTED = "[redacted]";

/**
 * The shortest value (in characters, i.e. code points) a `Redactor` accepts, and the
 * shortest derived form it searches for. Three characters or fewer match ordinary text
 * everywhere; four keep the shortest derived form (a base64 core, 24 bits) rare in a page.
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * How many consecutive characters of a value (letters and digits, case-folded, separators
 * left out) count as the value. A cut, a split line or a shortened name leaves a piece of a
 * password; eight characters of one are specific enough not to occur in ordinary text by
 * chance, and a value shorter than this must be found whole.
 */
export const PARTIAL_RUN_LENGTH = 8;

/** One searchable form: its text, and the RegExp source that matches it. */
interface Form {
  text: string;
  pattern: string;
}

/** Builds a form piece by piece, keeping its text and its pattern in step. */
class FormBuilder {
  text = "";
  pattern = "";

  /** Characters that must match exactly. */
  lit(s: string): this {
    this.text += s;
    this.pattern += escapeRegExp(s);
    return this;
  }

  /** Hex digits (and the `x` of `&#x`): either case matches. */
  hex(s: string): this {
    this.text += s;
    this.pattern += s.replace(/[a-fA-FxX]/g, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
    return this;
  }

  build(): Form {
    return { text: this.text, pattern: this.pattern };
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|\/-]/g, "\\$&");
}

const ENCODER = new TextEncoder();

function hexByte(b: number): string {
  return b.toString(16).padStart(2, "0").toUpperCase();
}

function hexOf(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += hexByte(b);
  return s;
}

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

const toUrlSafe = (b64: string) => b64.replace(/\+/g, "-").replace(/\//g, "_");

/**
 * The characters of `base64(lead + bytes)` that depend on `bytes` alone, where `lead` is
 * any `align` bytes: what a value looks like inside a longer base64 string that has it at
 * an offset of `align` (mod 3). The characters that mix its first or last bits with the
 * neighbouring bytes differ from one embedding to the next and are left out.
 */
function base64Core(bytes: Uint8Array, align: 0 | 1 | 2): { core: string; tail: string } {
  const padded = new Uint8Array(align + bytes.length);
  padded.set(bytes, align);
  const encoded = base64(padded);
  const first = Math.ceil((8 * align) / 6);
  const end = Math.floor((8 * (align + bytes.length)) / 6);
  // `tail`: the value at the end of the encoded data, where its last character and the
  // padding are fixed too (without it "[redacted]g==" would keep the last bits).
  return { core: encoded.slice(first, end), tail: encoded.slice(first) };
}

type Keep = (c: string) => boolean;

/** Percent-encodes `value` the way one encoder does: `keep` stays as is, the rest `%XX`. */
function percentForm(value: string, keep: Keep, spaceAsPlus: boolean, lower = false): Form {
  const f = new FormBuilder();
  for (const ch of value) {
    if (ch === " " && spaceAsPlus) f.lit("+");
    else if (ch.length === 1 && ch < "\x80" && keep(ch)) f.lit(ch);
    else {
      for (const b of ENCODER.encode(ch)) {
        const h = hexByte(b);
        f.lit("%").hex(lower ? h.toLowerCase() : h);
      }
    }
  }
  return f.build();
}

const ALNUM = /^[A-Za-z0-9]$/;
/** The encoders whose output differs: which ASCII characters each leaves alone. */
const PERCENT_ENCODERS: readonly { keep: Keep; plus: boolean }[] = [
  // encodeURIComponent
  { keep: (c) => ALNUM.test(c) || "-_.!~*'()".includes(c), plus: false },
  // encodeURIComponent(v).replace(/%20/g, "+"), a common hand-made form encoding
  { keep: (c) => ALNUM.test(c) || "-_.!~*'()".includes(c), plus: true },
  // encodeURI
  { keep: (c) => ALNUM.test(c) || "-_.!~*'();,/?:@&=+$#".includes(c), plus: false },
  // application/x-www-form-urlencoded (URLSearchParams, HTML forms)
  { keep: (c) => ALNUM.test(c) || "*-._".includes(c), plus: true },
  // RFC 3986 unreserved only (rawurlencode, Python quote(safe=""))
  { keep: (c) => ALNUM.test(c) || "-_.~".includes(c), plus: false },
  // the same with spaces as + (Go QueryEscape, Python quote_plus)
  { keep: (c) => ALNUM.test(c) || "-_.~".includes(c), plus: true },
  // PHP urlencode
  { keep: (c) => ALNUM.test(c) || "-_.".includes(c), plus: true },
  // every byte
  { keep: () => false, plus: false },
  // The URL standard's own encode sets, as a browser serializes a URL it reports (tab URLs,
  // link targets, network logs): fragment, query, special query (`'` too), path, userinfo.
  ...[' "<>`', ' "#<>', " \"#<>'", ' "#<>?^`{}', ' "#<>?^`{}/:;=@[\\]|'].map((set) => ({
    keep: (c: string) => c >= " " && c <= "~" && !set.includes(c),
    plus: false,
  })),
];

const HTML_NAMED: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
};
/** The spellings of an escaped `'`: HTML5 named, lodash/React, PHP, Python. */
const APOSTROPHES = ["&apos;", "&#39;", "&#039;", "&#x27;"];

function htmlForms(value: string): Form[] {
  const forms: Form[] = [];
  // Text content escaping: only & < >.
  forms.push(
    new FormBuilder().lit(value.replace(/[&<>]/g, (c) => HTML_NAMED[c])).build(),
  );
  for (const apos of APOSTROPHES) {
    const f = new FormBuilder();
    for (const ch of value) {
      if (ch !== "'") f.lit(HTML_NAMED[ch] ?? ch);
      else if (apos.startsWith("&#x")) f.lit("&#").hex(apos.slice(2, -1)).lit(";");
      else f.lit(apos);
    }
    forms.push(f.build());
  }
  const special = (ch: string) => ch in HTML_NAMED || ch === "'";
  for (const only of [true, false]) {
    const dec = new FormBuilder();
    const hex = new FormBuilder();
    for (const ch of value) {
      if (only && !special(ch)) {
        dec.lit(ch);
        hex.lit(ch);
        continue;
      }
      const cp = ch.codePointAt(0)!;
      dec.lit(`&#${cp};`);
      hex.lit("&#").hex(`x${cp.toString(16).toUpperCase()}`).lit(";");
    }
    forms.push(dec.build(), hex.build());
  }
  return forms;
}

const JSON_SHORT: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** JSON string escaping: as JSON.stringify does, with `\/`, ASCII-only, or every unit. */
function jsonForms(value: string): Form[] {
  const forms: Form[] = [];
  const variants = [
    { slash: false, ascii: false, all: false },
    { slash: true, ascii: false, all: false },
    { slash: false, ascii: true, all: false },
    { slash: true, ascii: true, all: false },
    { slash: false, ascii: false, all: true },
  ];
  for (const v of variants) {
    const f = new FormBuilder();
    // UTF-16 units: JSON escapes an astral character as its surrogate pair.
    for (let i = 0; i < value.length; i++) {
      const ch = value[i];
      const unit = value.charCodeAt(i);
      const lone = unit >= 0xd800 && unit <= 0xdfff && !isPairedSurrogate(value, i);
      const control = unit < 0x20 && !(ch in JSON_SHORT);
      if (v.all || lone || control || (v.ascii && unit > 0x7f)) {
        f.lit("\\u").hex(unit.toString(16).padStart(4, "0"));
      } else if (ch in JSON_SHORT) f.lit(JSON_SHORT[ch]);
      else if (ch === "/" && v.slash) f.lit("\\/");
      else f.lit(ch);
    }
    forms.push(f.build());
  }
  return forms;
}

function isPairedSurrogate(s: string, i: number): boolean {
  const u = s.charCodeAt(i);
  if (u >= 0xd800 && u <= 0xdbff) {
    const n = s.charCodeAt(i + 1);
    return n >= 0xdc00 && n <= 0xdfff;
  }
  const p = s.charCodeAt(i - 1);
  return u >= 0xdc00 && u <= 0xdfff && p >= 0xd800 && p <= 0xdbff;
}

/** Every form of `value`, duplicates included; empty below `MIN_SECRET_LENGTH`. */
function formsOf(value: string): Form[] {
  if ([...value].length < MIN_SECRET_LENGTH) return [];
  const lit = (s: string) => new FormBuilder().lit(s).build();
  const bytes = ENCODER.encode(value);
  const forms: Form[] = [
    lit(value),
    lit([...value].reverse().join("")),
    // split("").reverse() breaks surrogate pairs; a page that does it shows that.
    lit(value.split("").reverse().join("")),
  ];
  for (const { keep, plus } of PERCENT_ENCODERS) {
    forms.push(percentForm(value, keep, plus), percentForm(value, keep, plus, true));
  }
  // A value inside a URL that was itself put in a query parameter.
  forms.push(lit(encodeURIComponent(encodeURIComponent(value))));
  forms.push(...htmlForms(value));
  const b64 = base64(bytes);
  for (const s of [b64, b64.replace(/=+$/, "")]) forms.push(lit(s), lit(toUrlSafe(s)));
  for (const align of [0, 1, 2] as const) {
    const { core, tail } = base64Core(bytes, align);
    for (const s of [core, tail, tail.replace(/=+$/, "")]) forms.push(lit(s), lit(toUrlSafe(s)));
  }
  const hex = hexOf(bytes);
  forms.push(new FormBuilder().hex(hex.toLowerCase()).build(), new FormBuilder().hex(hex).build());
  const escaped = new FormBuilder();
  for (const b of bytes) escaped.lit("\\").hex(`x${hexByte(b).toLowerCase()}`);
  forms.push(escaped.build());
  forms.push(...jsonForms(value));
  return forms.filter((f) => [...f.text].length >= MIN_SECRET_LENGTH);
}

/**
 * The forms of `value` a `Redactor` searches for, distinct, longest first: raw; reversed;
 * percent-encoded as encodeURIComponent, encodeURI, form encoding (spaces as `+`),
 * RFC 3986, PHP and every-byte encoders, upper- and lower-case hex, and double-encoded;
 * HTML entities (named `&amp; &lt; &gt; &quot;` with every spelling of `'`, decimal and hex
 * numeric for the special characters or for every character); base64 standard and
 * URL-safe, padded and not, and the core of the value at each of the three offsets it can
 * have inside a longer base64 string (the characters that depend on the value alone; with
 * the last character and padding too when the value ends the data); hex lower and upper,
 * and `\xNN`; JSON string escaping (as JSON.stringify, with `\/`, ASCII-only `\uXXXX`, or
 * every unit as `\uXXXX`).
 *
 * Empty when `value` is shorter than `MIN_SECRET_LENGTH` characters.
 */
export function secretForms(value: string): string[] {
  const texts = new Set(formsOf(value).map((f) => f.text));
  return [...texts].sort((a, b) => b.length - a.length);
}

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
function skeletonOf(value: string): string {
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
function widthAt(text: string, i: number): number {
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
class Skeleton {
  units = new Uint16Array(1_024);
  from = new Int32Array(1_024);
  length = 0;

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
class RunTable {
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
