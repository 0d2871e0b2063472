/**
 * A page's string as an operator is shown it: redacted first, then every character that
 * would hide or reorder text on screen (bidi controls, invisible and control characters)
 * as a visible escape, with a flag saying which kinds there were. Split from
 * `request_view.ts`, which decodes a held request; this is the one way any of its texts
 * reaches the screen.
 *
 * Escapes: `\u{XXXX}` (upper-case hex, at least four digits), `\n`, `\r` and `\t` for those
 * three, and `\\` for a literal backslash, so a page cannot forge an escape by writing one.
 *
 * Pure: no I/O, no project imports (`runtime/net` is the bottom layer).
 *
 * @module
 */

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

/** The order flags are listed in, wherever a union of them is shown. */
export const FLAG_ORDER: readonly TextFlag[] = ["bidi", "invisible", "control"];

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

/** How many code points `s` holds. */
function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
