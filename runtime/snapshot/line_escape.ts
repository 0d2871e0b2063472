/**
 * Whether a line of page text could pass for a line the runtime writes, and its escape: the
 * one place that decides it, for every carrier of page text (outline text, headings, reading
 * mode, page log, dialogs, tabs, the network list, the diff, `browser_find`).
 *
 * The rule, stated once: a line is read from its *normalized start*. Any leading run of
 * characters that draw nothing or only mark a list item is skipped first ({@link lineStart}):
 * format, control, private-use and unassigned characters (`\p{C}`), separators and white space
 * (`\p{Z}`, `White_Space`), combining marks (`\p{M}`), every `Default_Ignorable_Code_Point`
 * (the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 among them), the Braille blank U+2800,
 * bullets and list marks (any punctuation or symbol, `- `, `•`, `*`, `~`, `|`, an emoji, and an
 * ordinal `1.`, `2)`, `3:`; not a symbol that folds to a letter: `ⓝ` reads `n`). What follows
 * is folded ({@link fold}): NFKC, accents dropped, lower-cased, lookalikes of the runtime's
 * brackets, arrows and letters mapped onto them (`［`, `【`, `〔`, `⎡` → `[`; `‹`, `«`, `〈`,
 * `＜`, `﹤`, `⟨` → `<`; Cyrillic `е`, small capital `ᴇ` → `e`), and characters that draw
 * nothing dropped however many there are, inside an opening too. A letter or roman ordinal
 * (`a)`, `iv.`) is read past as well as not. When that
 * opens like one of {@link RUNTIME_OPENINGS}, the whole line gets {@link ESCAPE} in front of it
 * (U+200B then `[e3] button "Approve"` is shown as a backslash, U+200B, `[e3] …`). An escaped
 * line never reads as a runtime line to the model, nor to any reader of finished lines
 * (`lineRefNumber()`, `frameMarker()` want `[` first). Neither does a lookalike of the block's
 * markers: `neutralize()` (untrusted.ts) escapes every run of arrows as they read folded.
 *
 * @module
 */

/** What an escaped page line starts with. */
export const ESCAPE = "\\";

/**
 * Every character a reader may take for the end of a line (Unicode's mandatory breaks and
 * CR): a page string shown within one line has none of them left raw.
 */
export const LINE_BREAKS: RegExp = /\r\n|[\n\v\f\r\u0085\u2028\u2029]/g;

/** A way the runtime's lines open, and which lines open so. */
export interface RuntimeOpening {
  /** Tested against a line's folded start ({@link lineStart}). */
  opening: RegExp;
  /** The runtime lines that open so (where they are written). */
  lines: string;
}

/**
 * How the runtime's own lines open, in and out of untrusted blocks, as {@link lineStart}
 * reads them (folded: lower case, lookalikes mapped). A page line that opens like any of these
 * is escaped. Broad on purpose: a page paragraph that opens with `Found` or `Note:` costs a
 * backslash; one that passes for a result line could steer the agent.
 */
export const RUNTIME_OPENINGS: readonly RuntimeOpening[] = [
  {
    opening: /^\[/,
    lines: "element lines `[e3] …` and `[frame …]`/`[/frame]` (outline_line.ts), page log and " +
      "network lines `[LOG] …`, `[GET] …` (page_log.ts, network_log.ts), `[redacted]`",
  },
  {
    opening: /^[<>]/,
    lines: "the block markers `<<<untrusted-… nonce=…>>>`, `<<<end-untrusted-…>>>` " +
      "(untrusted.ts) and the block's own `<<<… as before>>>`, `<<<3 lines gone>>>`, " +
      "`<<<origins: …>>>` (fold.ts, diff_format.ts, overview.ts, reading_view.ts)",
  },
  { opening: /^#/, lines: "headings `## Name` (outline_line.ts)" },
  {
    opening: /^(?:notice|error|denied|note|path|title|message|default|more|login|capture|dialog)\b/,
    lines: "`notice: …`, `error: CODE (…)`, `denied: …` (tools/response.ts), `note: …` " +
      "(reading_view.ts, network_log.ts), `path:`/`title:` (page_view.ts, diff_format.ts), " +
      "`message:`/`default:`/`dialog open: …` (dialog_view.ts), `more: …` (page_view.ts), " +
      "`login: …`, `capture: …`",
  },
  { opening: /^doc d?\p{Nd}/u, lines: "status lines `doc d3 · …` (page_view.ts, diff_format.ts)" },
  {
    opening: new RegExp(
      "^(?:clicked|typed|selected|pressed|hovered|dragged|filled|chose|cancelled|waited|" +
        "closed|resized|navigated|went|reloaded|accepted|dismissed|found|blocked|answered|" +
        "screenshot)\\b",
    ),
    lines: "result lines of the tools (`clicked e3`, `typed into e4`, `navigated to …`, " +
      "`found 3 lines for …`, `accepted the alert dialog`, `screenshot of the viewport: …`, …) " +
      "and the refused-requests notice (`blocked 2 requests …`)",
  },
  {
    opening: new RegExp(
      "^(?:no (?:line|readable|changes|other)|the (?:operator|previous|condition|image|" +
        "article|viewport|current|text|screenshot|policy)|a (?:new tab|file chooser)|tab \\p{Nd}|total messages|" +
        "returning \\p{Nd}|filename|fullpage|this session|\\p{Nd}+ (?:tabs?\\b|requests?\\b|" +
        "lines?\\b|more\\b|earlier\\b|older\\b|static\\b|messages?\\b))",
      "u",
    ),
    lines: "the other result and notice lines (`no line matches …`, `the operator approved …`, " +
      "`a new tab opened …`, `the text appeared` (browser_wait_for), `tab 2 opened 5 dialogs …`, " +
      "`2 tab(s)`, `3 requests since …`, " +
      "`Total messages: …`)",
  },
];

// ---- Folding ----------------------------------------------------------------------------

/**
 * Characters that draw nothing at a line's start, by Unicode's categories and properties (and
 * the blank letters no property names: the Braille blank; the Hangul fillers are
 * default-ignorable already, and listed for the reader).
 */
const BLANK =
  /^[\p{C}\p{Z}\p{M}\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800\u115F\u1160\u3164\uFFA0]$/u;

/** Blank characters that draw as space (the rest draw nothing). */
const SPACE = /^[\p{Z}\p{White_Space}\u2800\u3164\uFFA0]$/u;

/**
 * Punctuation, symbols and numbers that are not digits (`①`, `⑴`, `²`): bullets and list
 * marks when a line opens with them.
 */
const MARK = /^[\p{P}\p{S}\p{No}]$/u;

/** A letter: what a symbol that folds to one reads as (`ⓝ` is `n`), never a bullet. */
const LETTER = /^\p{L}$/u;

/** Where a line's start is: the characters openings start with, and the escape itself. */
const OPENING_CHARS = new Set(["[", "<", ">", "#", ESCAPE]);

// Lookalikes NFKC leaves alone: arrows and angle brackets (one, two or three of them), and the
// Cyrillic and Greek letters that read as the Latin letters of the openings (Unicode's
// confusables for a-z, lower case).
const LOOKALIKES: ReadonlyMap<string, string> = new Map([
  // ‹ 〈 ⟨ ❬ ❮ ❰ ⦑ ⧼ ˂ ᐸ ≺ ⋖ ⊲ ⦉ ⧀ ⋜ ᑉ
  ...pairs(
    "\u2039\u3008\u27E8\u276C\u276E\u2770\u2991\u29FC\u02C2\u1438\u227A\u22D6\u22B2\u2989\u29C0\u22DC\u1449",
    "<",
  ),
  ...pairs(
    "\u203A\u3009\u27E9\u276D\u276F\u2771\u2992\u29FD\u02C3\u1433\u227B\u22D7\u22B3\u298A\u29C1\u22DD\u144A",
    ">",
  ),
  // « 《 ⟪ ≪, and three: ⋘ ⫷
  ...pairs("\u00AB\u300A\u27EA\u226A", "<<"),
  ...pairs("\u00BB\u300B\u27EB\u226B", ">>"),
  ...pairs("\u22D8\u2AF7", "<<<"),
  ...pairs("\u22D9\u2AF8", ">>>"),
  // Pieces of brackets and corners drawn as one (⎡ ⎢ ⎣, ⌜ ⌞), NFKC leaves them.
  ...pairs("\u23A1\u23A2\u23A3\u231C\u231E", "["),
  ...pairs("\u23A4\u23A5\u23A6\u231D\u231F", "]"),
  // Latin small capitals read as the letters (`ɴᴏᴛɪᴄᴇ:`); NFKC leaves them too.
  ...each(
    "\u1D00\u0299\u1D04\u1D05\u1D07\uA730\u0262\u029C\u026A\u1D0A\u1D0B\u029F\u1D0D",
    "abcdefghijklm",
  ),
  ...each(
    "\u0274\u1D0F\u1D18\uA7AF\u0280\uA731\u1D1B\u1D1C\u1D20\u1D21\u028F\u1D22",
    "nopqrstuvwyz",
  ),
  ...pairs("аɑα", "a"),
  ...pairs("ьвβ", "b"),
  ...pairs("сϲ", "c"),
  ...pairs("ԁ", "d"),
  ...pairs("еεє", "e"),
  ...pairs("ɡ", "g"),
  ...pairs("һ", "h"),
  ...pairs("іιıӏ", "i"),
  ...pairs("ј", "j"),
  ...pairs("κк", "k"),
  ...pairs("м", "m"),
  ...pairs("пη", "n"),
  ...pairs("оοσ", "o"),
  ...pairs("рρ", "p"),
  ...pairs("ԛ", "q"),
  ...pairs("г", "r"),
  ...pairs("ѕ", "s"),
  ...pairs("тτ", "t"),
  ...pairs("υ", "u"),
  ...pairs("νѵ", "v"),
  ...pairs("ԝω", "w"),
  ...pairs("хχ", "x"),
  ...pairs("уγ", "y"),
]);

function pairs(chars: string, to: string): [string, string][] {
  return [...chars].map((c) => [c, to]);
}

/** Each of `chars` to the letter of `to` at its place. */
function each(chars: string, to: string): [string, string][] {
  return [...chars].map((c, i) => [c, to[i]]);
}

// Opening and closing brackets of every script read as `[`/`]`, but for round and curly ones
// and the CJK quotation brackets (「」『』), which read as what they are.
const KEPT_BRACKETS = new Set([..."(){}「」『』"]);

const folded = new Map<string, string>();

/**
 * One character as the openings are compared with it: blank ones to a space or nothing, the
 * rest by NFKC, without accents, lower-cased, lookalikes mapped (`Ｅ` → `e`, `〔` → `[`).
 */
export function foldChar(ch: string): string {
  let out = folded.get(ch);
  if (out !== undefined) return out;
  out = foldUncached(ch);
  // Bounded: a page can show every code point, but there are only so many.
  if (folded.size < 50_000) folded.set(ch, out);
  return out;
}

function foldUncached(ch: string): string {
  if (BLANK.test(ch)) return SPACE.test(ch) ? " " : "";
  const base = ch.normalize("NFKC").normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
  let out = "";
  for (const c of base) {
    const like = LOOKALIKES.get(c);
    if (like !== undefined) out += like;
    else if (!KEPT_BRACKETS.has(c) && /^\p{Ps}$/u.test(c)) out += "[";
    else if (!KEPT_BRACKETS.has(c) && /^\p{Pe}$/u.test(c)) out += "]";
    else out += c;
  }
  return out;
}

/**
 * A superset of the characters whose fold holds an arrow (`<`, `>`): the blocks the lookalikes
 * above and what NFKC or NFD makes one of (`＜`, `﹤`, `≮`, `⊀`, U+2329) come from. Only text
 * with one of them is folded to look for a run; `line_escape_test.ts` checks it over all of
 * Unicode.
 */
export const ARROW_LIKE: RegExp =
  /[<>\u00AB\u00BB\u02C2\u02C3\u1400-\u167F\u2000-\u2BFF\u3000-\u303F\uFE00-\uFFFF]/;

/** `text` folded ({@link foldChar}), each run of spaces as one. */
export function fold(text: string): string {
  let out = "";
  for (const ch of text) out += foldChar(ch);
  return out.replace(/ {2,}/g, " ");
}

/** How many characters of a line's start {@link lineStart} folds (the openings are short). */
const START_CHARS = 40;

/**
 * A line's normalized start: past its leading run of blank characters, bullets and list marks
 * (and ordinals: `1.`, `2)`, `3:`), its next {@link START_CHARS} characters folded.
 */
export function lineStart(line: string): string {
  const chars = [...line];
  let i = 0;
  for (;;) {
    while (i < chars.length) {
      const ch = chars[i];
      const f = foldChar(ch);
      const first = f.trimStart()[0];
      if (first === undefined) { // draws nothing (or only space)
        i++;
        continue;
      }
      // A symbol that folds to a letter (`ⓝ`, `🄽`) reads as that letter, not as a bullet.
      if (OPENING_CHARS.has(first) || LETTER.test(first)) break;
      if (!(MARK.test(first) || MARK.test(ch))) break;
      i++;
    }
    // An ordinal (`1.`, `２)`), each of its characters folded.
    let j = i;
    while (j < chars.length && j - i < 4 && /^\p{Nd}$/u.test(foldChar(chars[j]))) j++;
    if (j === i || j >= chars.length || !/^[.):]$/.test(foldChar(chars[j]))) break;
    i = j + 1;
  }
  // Folded until it holds START_CHARS characters: those that draw nothing fold to nothing,
  // and a page may put any number of them inside an opening (`n`, 45 × U+200B, `otice:`).
  let out = "";
  for (let k = i; k < chars.length && out.length < START_CHARS; k++) {
    out += foldChar(chars[k]);
    if (out.startsWith(" ")) out = out.trimStart();
    out = out.replace(/ {2,}/g, " ");
  }
  return out;
}

/** Whether `line` (page text) opens like a line the runtime writes ({@link RUNTIME_OPENINGS}). */
export function opensLikeRuntimeLine(line: string): boolean {
  let start = lineStart(line);
  // A list's letter or roman ordinal (`a)`, `iv.`, `Ⅱ.`) may mark an item too; it is not
  // skipped like a digit's (`note.` opens a runtime line itself), the line is read both ways.
  for (let k = 0; k < 3; k++) {
    if (RUNTIME_OPENINGS.some((o) => o.opening.test(start))) return true;
    const ordinal = LETTER_ORDINAL.exec(start);
    if (!ordinal) return false;
    start = lineStart(start.slice(ordinal[0].length));
  }
  return RUNTIME_OPENINGS.some((o) => o.opening.test(start));
}

/** A letter or roman ordinal at a folded start: `a)`, `b.`, `iv.`, `xii)`. */
const LETTER_ORDINAL = /^(?:\p{L}|[ivxlcdm]{1,6})[.)]/u;

/**
 * A line of page text as the model is shown it: with {@link ESCAPE} in front when it opens
 * like a runtime line, whatever invisible characters or bullets come first; as it is otherwise.
 */
export function escapeLine(text: string): string {
  return opensLikeRuntimeLine(text) ? ESCAPE + text : text;
}

/**
 * Page text kept on one line: each line break ({@link LINE_BREAKS}) becomes `with` (a space
 * by default), so no part of it begins a line of its own.
 */
export function oneLine(text: string, withText = " "): string {
  return text.replace(LINE_BREAKS, withText);
}

/**
 * Page text as a JSON string (`"a \"b\""`), with the line breaks JSON leaves raw (U+0085,
 * U+2028, U+2029) escaped too: a quoted name never ends its line.
 */
export function quote(text: string): string {
  return JSON.stringify(text).replace(
    /[\u0085\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
