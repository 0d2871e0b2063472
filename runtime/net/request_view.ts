/**
 * What an operator is shown of a held HTTP request: the method, the whole URL, every query
 * entry and every body entry, each redacted and then made visible. The operator approves
 * exactly these bytes, so nothing is dropped or cut: a value of 100 KB is shown whole, the
 * 500th field is shown, and a character that would hide or reorder text on screen (a
 * right-to-left override, a zero-width space, a control character) becomes a visible escape
 * and sets a flag.
 *
 * Escapes: `\u{XXXX}` (upper-case hex, at least four digits), `\n`, `\r` and `\t` for those
 * three, and `\\` for a literal backslash, so a page cannot forge an escape by writing one.
 *
 * Encodings: `application/x-www-form-urlencoded` (WHATWG), `multipart/form-data` (parsed
 * strictly: anything a browser would not send, such as a preamble, an epilogue, a header
 * other than Content-Disposition and Content-Type, or a backslash in a quoted parameter,
 * makes the body `opaque`, because servers read such bodies differently and an entry one of
 * them sees could be missing here) and `text/plain` form encoding (`name=value` lines). Any
 * other body is `opaque`: its size and digest, plus, when it is UTF-8 text of at most
 * `BODY_TEXT_MAX` bytes (JSON, say), one entry named `(body)` holding the whole text.
 *
 * Pure: no I/O, no project imports (`runtime/net` is the bottom layer).
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Why a text was marked: it held bidi controls, invisible characters or control characters. */
export type TextFlag = "bidi" | "invisible" | "control";

/**
 * A string as shown: redacted first, then every invisible, bidi and control character as a
 * visible escape like `\u{202E}`; `length` is the full length in code points of the
 * (redacted) original; never cut.
 */
export interface ShownText {
  text: string;
  length: number;
  flags: TextFlag[];
}

/** One name/value entry; a multipart file part carries `file` and an empty `value`. */
export interface ShownEntry {
  name: ShownText;
  value: ShownText;
  /**
   * A file part: described by name, type (escaped; "" when the part had none), size and
   * digest, never by its bytes.
   */
  file?: { filename: ShownText; content_type: string; size: number; sha256: string };
}

/** A held request as the operator sees it. */
export interface RequestView {
  /** The method, escaped. */
  method: string;
  /** The full URL, query included, redacted and escaped. */
  url: ShownText;
  /** The URL's query entries, decoded, in order. */
  query: ShownEntry[];
  /**
   * The headers a page may have set or chosen (all but those the browser always writes
   * itself, `HIDDEN_HEADERS`): a `Cookie`, a `Referer`, an `X-HTTP-Method-Override` change
   * what a server does with the same body. Redacted and escaped like every text.
   */
  headers: ShownEntry[];
  /** The request's Content-Type, redacted and escaped; null when it had none. */
  content_type: string | null;
  /** How the body was read (`none`: no body bytes). */
  encoding: "none" | "urlencoded" | "multipart" | "text" | "opaque";
  /**
   * Every body entry, decoded, in order, none dropped. Empty for `none`; for `opaque`,
   * empty or one entry named `(body)` with the whole body as text (see `BODY_TEXT_MAX`).
   */
  entries: ShownEntry[];
  /** Body bytes. */
  size: number;
  /** Hex SHA-256 of the exact body bytes. */
  sha256: string;
  /** The union of every flag of the view, in the order `bidi`, `invisible`, `control`. */
  flags: TextFlag[];
}

/** The request the egress proxy holds. */
export interface HeldRequestInput {
  method: string;
  url: string;
  contentType: string | null;
  body: Uint8Array;
  /** Every header the request carries (Content-Type included; it is shown on its own). */
  headers?: readonly (readonly [string, string])[];
}

/**
 * Headers the browser writes itself on every request, which a page cannot set: not shown
 * (the Content-Type is shown on its own).
 */
const HIDDEN_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "content-type",
  "user-agent",
  "accept-encoding",
  "accept-language",
  "upgrade-insecure-requests",
  "cache-control",
  "pragma",
  "priority",
  "dnt",
  "sec-fetch-site",
  "sec-fetch-mode",
  "sec-fetch-dest",
  "sec-fetch-user",
  "sec-ch-ua",
  "sec-ch-ua-mobile",
  "sec-ch-ua-platform",
]);

/**
 * The largest opaque body (bytes) also shown as text in a `(body)` entry when it is valid
 * UTF-8. Larger ones are shown by size and digest only: a text is shown whole or not at all.
 */
export const BODY_TEXT_MAX = 256 * 1024;

/** The name of the one entry that shows an opaque body as text. */
export const BODY_ENTRY_NAME = "(body)";

const FLAG_ORDER: readonly TextFlag[] = ["bidi", "invisible", "control"];

/** Bidi controls: ALM, LRM, RLM, LRE…RLO, LRI…PDI. */
function isBidi(cp: number): boolean {
  return cp === 0x061c || cp === 0x200e || cp === 0x200f ||
    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/**
 * Everything escaped: the backslash (so escapes cannot be forged), controls (Cc) and line or
 * paragraph separators, format characters (Cf), unassigned code points and lone surrogates
 * (no agreed glyph), and letters or marks that draw nothing: the combining grapheme joiner,
 * Hangul fillers, Khmer inherent vowels, Mongolian variation selectors, the braille blank,
 * variation selectors and the tag / variation-selector-supplement plane 14 block.
 */
const ESCAPED =
  /[\\\p{Cc}\p{Cf}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\uFFFD\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0000}-\u{E0FFF}]/gu;
// U+FFFD stands for bytes that are not UTF-8: a server may read them otherwise.
const CONTROL = /^[\p{Cc}\p{Zl}\p{Zp}\uFFFD]$/u;

const SHORT: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `raw` with every invisible, bidi and control character as a visible escape, and the
 * flags it raised. A newline, carriage return or tab is escaped but raises no flag: a
 * textarea holds them honestly and they hide nothing once escaped.
 */
export function escapeText(raw: string): { text: string; flags: TextFlag[] } {
  const seen = new Set<TextFlag>();
  const text = raw.replace(ESCAPED, (ch) => {
    const short = SHORT[ch];
    if (short !== undefined) return short;
    const cp = ch.codePointAt(0) ?? 0;
    seen.add(isBidi(cp) ? "bidi" : CONTROL.test(ch) ? "control" : "invisible");
    return `\\u{${cp.toString(16).toUpperCase().padStart(4, "0")}}`;
  });
  return { text, flags: FLAG_ORDER.filter((f) => seen.has(f)) };
}

/**
 * `raw` as shown: `redact` first (it sees the original, so a secret is found before an
 * escape could split it), then escaped. `length` counts the redacted text's code points.
 */
export function showText(raw: string, redact: (s: string) => string): ShownText {
  const redacted = redact(raw);
  const { text, flags } = escapeText(redacted);
  return { text, length: codePoints(redacted), flags };
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });
const UTF8_STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const ENCODER = new TextEncoder();

/** `bytes` as UTF-8 text, or null when they are not valid UTF-8. */
function strictText(bytes: Uint8Array): string | null {
  try {
    return UTF8_STRICT.decode(bytes);
  } catch {
    return null;
  }
}

/** A decoded name/value pair before it is shown. */
interface RawEntry {
  name: string;
  value: string;
  file?: { filename: string; contentType: string; bytes: Uint8Array };
}

/** The query string of `url` (after the first `?`, before any `#`), or "". */
function queryOf(url: string): string {
  const hash = url.indexOf("#");
  const beforeHash = hash === -1 ? url : url.slice(0, hash);
  const q = beforeHash.indexOf("?");
  return q === -1 ? "" : beforeHash.slice(q + 1);
}

/** WHATWG urlencoded parsing (`+` is a space, percent-decoding, UTF-8 with replacement). */
function urlencodedEntries(text: string): RawEntry[] {
  return [...new URLSearchParams(text)].map(([name, value]) => ({ name, value }));
}

/**
 * The WHATWG `text/plain` form encoding: `name=value` lines, each ended by CRLF. Null when
 * the text is not in that shape (a line without `=`, or no final CRLF): it is then shown
 * whole as an opaque body.
 */
function textPlainEntries(text: string): RawEntry[] | null {
  if (!text.endsWith("\r\n")) return null;
  const lines = text.slice(0, -2).split("\r\n");
  const out: RawEntry[] = [];
  for (const line of lines) {
    const eq = line.indexOf("=");
    if (eq === -1) return null;
    out.push({ name: line.slice(0, eq), value: line.slice(eq + 1) });
  }
  return out;
}

/** A media type's lower-cased essence and its parameters; null when malformed. */
function parseMediaType(value: string): { essence: string; params: Map<string, string> } | null {
  const semi = value.indexOf(";");
  const essence = (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
  const params = semi === -1 ? new Map<string, string>() : parseParams(value.slice(semi + 1));
  return params ? { essence, params } : null;
}

/**
 * `key=value` parameters separated by `;`, values as tokens or quoted strings; keys
 * lower-cased. Null for a malformed list, a repeated key, or a backslash inside quotes
 * (quoted-pair handling differs between servers: refusing it keeps one reading).
 */
function parseParams(text: string): Map<string, string> | null {
  const params = new Map<string, string>();
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  };
  while (true) {
    skipSpace();
    if (i >= text.length) return params;
    const eq = text.indexOf("=", i);
    if (eq === -1) return null;
    const key = text.slice(i, eq).trim().toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key) || params.has(key)) return null;
    i = eq + 1;
    let value: string;
    if (text[i] === '"') {
      const close = text.indexOf('"', i + 1);
      if (close === -1) return null;
      value = text.slice(i + 1, close);
      if (value.includes("\\")) return null;
      i = close + 1;
    } else {
      const end = text.indexOf(";", i);
      value = (end === -1 ? text.slice(i) : text.slice(i, end)).trim();
      if (value === "" || /[\s"]/.test(value)) return null;
      i = end === -1 ? text.length : end;
    }
    params.set(key, value);
    skipSpace();
    if (i >= text.length) return params;
    if (text[i] !== ";") return null;
    i++;
  }
}

/** The first index of `needle` in `hay` at or after `from`, or -1. */
function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  const last = hay.length - needle.length;
  outer: for (
    let i = hay.indexOf(first, from);
    i !== -1 && i <= last;
    i = hay.indexOf(first, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function startsWithAt(hay: Uint8Array, needle: Uint8Array, at: number): boolean {
  if (at + needle.length > hay.length) return false;
  for (let j = 0; j < needle.length; j++) if (hay[at + j] !== needle[j]) return false;
  return true;
}

const CRLF = ENCODER.encode("\r\n");
const DASHES = ENCODER.encode("--");
const HEADER_END = ENCODER.encode("\r\n\r\n");

/**
 * A `multipart/form-data` body in the shape browsers send, or null: no preamble, parts
 * with only Content-Disposition (`form-data`, `name`, optional `filename`) and Content-Type
 * headers, each delimiter followed by CRLF or by `--` and at most a final CRLF.
 */
function multipartEntries(body: Uint8Array, boundary: string): RawEntry[] | null {
  if (boundary.length < 1 || boundary.length > 70) return null;
  const delimiter = ENCODER.encode(`--${boundary}`);
  const next = ENCODER.encode(`\r\n--${boundary}`);
  if (!startsWithAt(body, delimiter, 0)) return null;
  const out: RawEntry[] = [];
  let pos = delimiter.length;
  while (true) {
    if (startsWithAt(body, DASHES, pos)) {
      const rest = body.length - (pos + 2);
      return rest === 0 || (rest === 2 && startsWithAt(body, CRLF, pos + 2)) ? out : null;
    }
    if (!startsWithAt(body, CRLF, pos)) return null;
    const start = pos + 2;
    const headerEnd = indexOfBytes(body, HEADER_END, start);
    if (headerEnd === -1) return null;
    const part = partHeaders(UTF8.decode(body.subarray(start, headerEnd)));
    if (!part) return null;
    const contentStart = headerEnd + 4;
    const contentEnd = indexOfBytes(body, next, contentStart);
    if (contentEnd === -1) return null;
    const content = body.subarray(contentStart, contentEnd);
    if (part.filename !== undefined) {
      out.push({
        name: part.name,
        value: "",
        file: {
          filename: part.filename,
          // Absent stays absent (""): a default would show something that was not sent.
          contentType: part.contentType ?? "",
          bytes: content,
        },
      });
    } else {
      out.push({ name: part.name, value: UTF8.decode(content) });
    }
    pos = contentEnd + next.length;
  }
}

/** One part's headers, or null when they are not what a browser sends. */
function partHeaders(
  block: string,
): { name: string; filename?: string; contentType?: string } | null {
  let disposition: Map<string, string> | undefined;
  let contentType: string | undefined;
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) return null;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === "content-disposition" && disposition === undefined) {
      const parsed = parseMediaType(value);
      if (!parsed || parsed.essence !== "form-data") return null;
      disposition = parsed.params;
    } else if (key === "content-type" && contentType === undefined) {
      contentType = value;
    } else {
      return null;
    }
  }
  const name = disposition?.get("name");
  if (!disposition || name === undefined) return null;
  for (const key of disposition.keys()) if (key !== "name" && key !== "filename") return null;
  const filename = disposition.get("filename");
  return {
    name,
    ...(filename !== undefined ? { filename } : {}),
    ...(contentType !== undefined ? { contentType } : {}),
  };
}

/**
 * A boundary as browsers make them (`----WebKitFormBoundary…`): letters, digits and `-_.+`
 * only; no `,` `;` `=` or quote, where servers disagree on where a boundary ends.
 */
const BROWSER_BOUNDARY = /^[0-9A-Za-z_.+-]{1,70}$/;

/**
 * Whether a form body in `media` is read one way only: no parameter but the ones named (a
 * `charset` other than UTF-8 is decoded by its own codec on some servers), and, for
 * multipart, a browser-shaped boundary as the only parameter (PHP takes the first
 * "boundary" substring and cuts at `,`; Rack takes the last `boundary=`): anything else is
 * shown whole as text, never decoded into entries a server would read differently.
 */
function unambiguous(
  media: { params: Map<string, string> },
  allowed: readonly string[],
): boolean {
  for (const [k, v] of media.params) {
    if (!allowed.includes(k)) return false;
    if (k === "charset" && v.toLowerCase() !== "utf-8") return false;
  }
  const boundary = media.params.get("boundary");
  return boundary === undefined || BROWSER_BOUNDARY.test(boundary);
}

/** The body's encoding and raw entries. */
function decodeBody(
  contentType: string | null,
  body: Uint8Array,
): { encoding: RequestView["encoding"]; entries: RawEntry[] } {
  if (body.length === 0) return { encoding: "none", entries: [] };
  const media = contentType === null ? null : parseMediaType(contentType);
  const essence = media?.essence ?? "";
  if (
    essence === "application/x-www-form-urlencoded" && media &&
    unambiguous(media, ["charset"])
  ) {
    // Bytes that are not UTF-8 show as an escaped, flagged U+FFFD.
    return { encoding: "urlencoded", entries: urlencodedEntries(UTF8.decode(body)) };
  }
  if (
    essence === "multipart/form-data" && media && unambiguous(media, ["boundary"])
  ) {
    const boundary = media.params.get("boundary");
    const entries = boundary === undefined ? null : multipartEntries(body, boundary);
    if (entries) return { encoding: "multipart", entries };
  }
  if (essence === "text/plain" && media && unambiguous(media, ["charset"])) {
    // A form of any size is decoded: BODY_TEXT_MAX limits only the `(body)` fallback.
    const plain = strictText(body);
    const entries = plain === null ? null : textPlainEntries(plain);
    if (entries) return { encoding: "text", entries };
  }
  // Anything else is shown as its text (bytes that are not UTF-8 as a flagged U+FFFD: a
  // lenient server still reads the rest), up to BODY_TEXT_MAX; past it, size and digest.
  return {
    encoding: "opaque",
    entries: body.length <= BODY_TEXT_MAX
      ? [{ name: BODY_ENTRY_NAME, value: UTF8.decode(body) }]
      : [],
  };
}

/**
 * The held request as the operator is shown it. `redact` is called on the URL, every query
 * and body name and value, every filename and the content types, always before escaping.
 * File contents are never shown: only their size and SHA-256.
 */
export function requestView(input: HeldRequestInput, redact: (s: string) => string): RequestView {
  const flags = new Set<TextFlag>();
  const collect = (t: ShownText): ShownText => {
    for (const f of t.flags) flags.add(f);
    return t;
  };
  const plain = (raw: string): string => collect(showText(raw, redact)).text;
  const show = (e: RawEntry): ShownEntry => ({
    name: collect(showText(e.name, redact)),
    value: collect(showText(e.value, redact)),
    ...(e.file
      ? {
        file: {
          filename: collect(showText(e.file.filename, redact)),
          content_type: plain(e.file.contentType),
          size: e.file.bytes.length,
          sha256: sha256Hex(e.file.bytes),
        },
      }
      : {}),
  });

  const { encoding, entries } = decodeBody(input.contentType, input.body);
  const view: RequestView = {
    method: plain(input.method),
    url: collect(showText(input.url, redact)),
    query: urlencodedEntries(queryOf(input.url)).map(show),
    headers: (input.headers ?? [])
      .filter(([name]) => !HIDDEN_HEADERS.has(name.toLowerCase()))
      .map(([name, value]) => show({ name, value })),
    content_type: input.contentType === null ? null : plain(input.contentType),
    encoding,
    entries: entries.map(show),
    size: input.body.length,
    sha256: sha256Hex(input.body),
    flags: [],
  };
  view.flags = FLAG_ORDER.filter((f) => flags.has(f));
  return view;
}
