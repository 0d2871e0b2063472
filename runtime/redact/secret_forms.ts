/**
 * The forms a secret value takes when an encoder writes it (percent-encoding, HTML entities,
 * base64 at every alignment, hex, JSON escaping, reversed), and the RegExp source of each.
 * Split from `redactor.ts`: this is the *forms* matcher's input, built once per value; the
 * redactor joins the patterns into one RegExp. Only hex digits match in either case: an
 * encoding is matched whole, as the encoder wrote it.
 *
 * @module
 */

/**
 * The shortest value (in characters, i.e. code points) a `Redactor` accepts, and the
 * shortest derived form it searches for. Three characters or fewer match ordinary text
 * everywhere; four keep the shortest derived form (a base64 core, 24 bits) rare in a page.
 */
export const MIN_SECRET_LENGTH = 4;

/** One searchable form: its text, and the RegExp source that matches it. */
export interface Form {
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
export function formsOf(value: string): Form[] {
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
