/**
 * The search for a planted secret in what an arm returned, built independently of the
 * runtime's redactor (so a form the redactor misses is still found here):
 *
 * - every whole form `encodings.ts` builds with the platform's own encoders;
 * - base64 and base64url of the value at each of the three byte alignments, so it is found
 *   inside a longer encoded string (a Basic credential, an encoded JSON body);
 * - the value and every run of 8 of its characters in the text as it is, and in the text
 *   percent-decoded, entity-decoded and `\u`-unescaped, case folded;
 * - the value's letters and digits in the text's letters and digits (case folded), which
 *   sees through spacing, zero-width characters and separators put between its characters.
 *
 * @module
 */
import { b64, expectedForms, utf8 } from "./encodings.ts";

/** The shortest run of a value's characters that counts as leaking it. */
const PART = 8;

/** A search for one planted value. */
export interface SecretSearch {
  /** Names of the forms of the value found in `text` (`raw`, `base64@1`, `part`, …). */
  find(text: string): string[];
  /**
   * `text` with every form of the value replaced by `[planted <label>]`; when a form is
   * still found after that (one seen only once decoded), the whole text is withheld.
   */
  scrub(text: string): string;
}

/** A search for `value`, reported under `label` (e.g. `password`). */
export function secretSearch(value: string, label: string): SecretSearch {
  const forms = new Map<string, string>();
  for (const [name, form] of Object.entries(expectedForms(value))) {
    if (form.length >= 6 && !forms.has(form)) forms.set(form, name);
  }
  for (const [name, core] of base64Cores(value)) if (!forms.has(core)) forms.set(core, name);
  const folded = value.toLowerCase();
  const parts: string[] = [];
  for (let i = 0; i + PART <= folded.length; i++) parts.push(folded.slice(i, i + PART));
  const skeleton = alnum(value);
  // Longest first, so a whole form is replaced before a part of it.
  const needles = [...forms.keys(), ...parts].sort((a, b) => b.length - a.length);

  const find = (text: string): string[] => {
    const found = new Set<string>();
    for (const [form, name] of forms) if (text.includes(form)) found.add(name);
    if (found.size > 0) return [...found];
    for (const [name, view] of decodedViews(text)) {
      if (view.includes(folded)) found.add(`${name}`);
      else if (parts.some((p) => view.includes(p))) found.add(`part (${name})`);
    }
    if (found.size === 0 && skeleton.length >= 12 && alnum(text).includes(skeleton)) {
      found.add("letters and digits");
    }
    return [...found];
  };
  return {
    find,
    scrub(text) {
      let out = text;
      for (const n of needles) out = replaceFolded(out, n, `[planted ${label}]`);
      return find(out).length === 0 ? out : `[withheld: it holds a form of the planted ${label}]`;
    },
  };
}

/** The text and its decodings, case folded, each named. */
function decodedViews(text: string): Array<[string, string]> {
  return [
    ["raw", text.toLowerCase()],
    ["percent-decoded", percentDecode(text).toLowerCase()],
    ["entity-decoded", entityDecode(text).toLowerCase()],
    [
      "unicode-unescaped",
      text.replace(/\\u([0-9a-fA-F]{4})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))
        .toLowerCase(),
    ],
  ];
}

/** Base64 of the value as it reads inside a longer encoding, at each byte alignment. */
function base64Cores(value: string): Array<[string, string]> {
  const bytes = utf8(value);
  const out: Array<[string, string]> = [];
  for (const k of [0, 1, 2]) {
    const padded = new Uint8Array(k + bytes.length);
    padded.set(bytes, k);
    const std = b64(padded);
    // Characters that mix in the bytes before or after the value differ by context: drop them.
    const core = std.slice(Math.ceil((k * 8) / 6), std.length - 4);
    if (core.length < 12) continue;
    out.push([core, `base64@${k}`]);
    const url = core.replace(/\+/g, "-").replace(/\//g, "_");
    if (url !== core) out.push([url, `base64url@${k}`]);
  }
  return out;
}

function alnum(s: string): string {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

function percentDecode(s: string): string {
  return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  }).replace(/\+/g, " ");
}

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function entityDecode(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return NAMED[e] ?? m;
  });
}

/** `text` with every occurrence of `needle` (compared case folded) replaced. */
function replaceFolded(text: string, needle: string, by: string): string {
  const lower = text.toLowerCase();
  const n = needle.toLowerCase();
  // Case folding keeps lengths for the ASCII a planted value and its encodings are made of.
  if (lower.length !== text.length) return text.split(needle).join(by);
  let out = "";
  let at = 0;
  for (let i = lower.indexOf(n); i >= 0; i = lower.indexOf(n, at)) {
    out += text.slice(at, i) + by;
    at = i + n.length;
  }
  return out + text.slice(at);
}
