/**
 * The body of a held request decoded into its entries, the way browsers encode forms:
 * `application/x-www-form-urlencoded` (WHATWG), `multipart/form-data` (parsed strictly:
 * anything a browser would not send, such as a preamble, an epilogue, a header other than
 * Content-Disposition and Content-Type, or a backslash in a quoted parameter, makes the body
 * `opaque`, because servers read such bodies differently and an entry one of them sees could
 * be missing here) and `text/plain` form encoding (`name=value` lines). Any other body is
 * `opaque`: one entry named `(body)` holding the whole text when it is UTF-8 of at most
 * `BODY_TEXT_MAX` bytes, else none. Split from `request_view.ts`, which turns these raw
 * entries into what the operator is shown.
 *
 * Pure: no I/O, no project imports (`runtime/net` is the bottom layer).
 *
 * @module
 */

/** How a body was read (`none`: no body bytes). */
export type BodyEncoding = "none" | "urlencoded" | "multipart" | "text" | "opaque";

/**
 * The largest opaque body (bytes) also shown as text in a `(body)` entry when it is valid
 * UTF-8. Larger ones are shown by size and digest only: a text is shown whole or not at all.
 */
export const BODY_TEXT_MAX = 256 * 1024;

/** The name of the one entry that shows an opaque body as text. */
export const BODY_ENTRY_NAME = "(body)";

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
export interface RawEntry {
  name: string;
  value: string;
  file?: { filename: string; contentType: string; bytes: Uint8Array };
}

/** The query string of `url` (after the first `?`, before any `#`), or "". */
export function queryOf(url: string): string {
  const hash = url.indexOf("#");
  const beforeHash = hash === -1 ? url : url.slice(0, hash);
  const q = beforeHash.indexOf("?");
  return q === -1 ? "" : beforeHash.slice(q + 1);
}

/** WHATWG urlencoded parsing (`+` is a space, percent-decoding, UTF-8 with replacement). */
export function urlencodedEntries(text: string): RawEntry[] {
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
export function decodeBody(
  contentType: string | null,
  body: Uint8Array,
): { encoding: BodyEncoding; entries: RawEntry[] } {
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
