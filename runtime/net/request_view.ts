/**
 * What an operator is shown of a held HTTP request: the method, the whole URL, every query
 * entry and every body entry, each redacted and then made visible. The operator approves
 * exactly these bytes, so nothing is dropped or cut: a value of 100 KB is shown whole, the
 * 500th field is shown, and a character that would hide or reorder text on screen (a
 * right-to-left override, a zero-width space, a control character) becomes a visible escape
 * and sets a flag.
 *
 * Texts are shown through `shown_text.ts` (redact, then escape and flag); bodies are
 * decoded into entries by `form_body.ts` (urlencoded, strict multipart, text/plain; anything
 * else `opaque`: its size and digest, plus its whole text when it is UTF-8 of at most
 * `BODY_TEXT_MAX` bytes).
 *
 * Pure: no I/O, no project imports (`runtime/net` is the bottom layer).
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  type BodyEncoding,
  decodeBody,
  queryOf,
  type RawEntry,
  urlencodedEntries,
} from "./form_body.ts";
import { FLAG_ORDER, type ShownText, showText, type TextFlag } from "./shown_text.ts";

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
  encoding: BodyEncoding;
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

/** Hex SHA-256 of `bytes`. */
function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
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
