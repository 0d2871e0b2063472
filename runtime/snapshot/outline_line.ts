/**
 * The outline's line format, written and read in one place: a control's facts become its
 * line (`[e12] textbox "Email" = "a@b.c" [disabled]`, a link by its name and arrow with no
 * role word, `[e3] "Home" -> /`), and its overview form; headings, frame markers and list
 * bullets; the limits every line keeps. Both tree walks (`ax_outline.ts`, `dom_outline.ts`) write through it, and the
 * readers of finished lines (diffs, folds, carried refs, the typed-value check) parse with
 * it, so a change to the format is one edit here.
 *
 * Every string handed to this module is already redacted and cut by the writer
 * (`outline_writer.ts`): this module only arranges them.
 *
 * @module
 */
import { escapeLine, oneLine, quote } from "./line_escape.ts";

/** ARIA roles of controls: what an element's `role` attribute can make a control. */
export const ARIA_CONTROL_ROLES: readonly string[] = [
  "link",
  "button",
  "textbox",
  "searchbox",
  "combobox",
  "listbox",
  "checkbox",
  "radio",
  "switch",
  "slider",
  "spinbutton",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "tab",
  "treeitem",
];
/** Child frames followed at most this deep (frames in frames in frames). */
export const MAX_FRAME_DEPTH = 8;

/** Characters of a control's name kept (after redaction). */
export const NAME_MAX = 120;
/** Characters of a field's value kept (after redaction). */
export const VALUE_MAX = 120;
/** Option names listed on a select line; the rest are counted. */
export const OPTIONS_MAX = 20;
/** A text line longer than this is split; a heading or a link target is cut to it. */
export const LINE_MAX = 1_000;
/** How much of a text line the brief (overview) form keeps. */
export const BRIEF_TEXT_CHARS = 20;
/**
 * How much of a control's name the brief (overview) form keeps: a teaser link's whole
 * headline is on the full pages, and enough of it to pick one is here.
 */
export const BRIEF_NAME_CHARS = 60;

/** What a control line says, in the walk's words; strings redacted and cut already. */
export interface ControlFacts {
  ref: string;
  /** The role as shown: an ARIA role, Chromium's own (`ColorWell`), `password`, `editable`. */
  role: string;
  name: string;
  /** A link's target as shown (origin and path, or a path on the page's own origin). */
  target?: string;
  /** `= "a", "b"`: a field's value, or a select's selected option names. */
  values?: readonly string[];
  /** A select's option names. */
  options?: readonly string[];
  checked?: "true" | "mixed";
  /** A tab that is the selected one. */
  selectedTab?: boolean;
  expanded?: boolean;
  disabled?: boolean;
}

/**
 * A control's line and its overview form. A link says what it is by its arrow or its quoted
 * name with no role word (`[e3] "Home" -> /`); only a link with neither keeps the word.
 */
export function controlLine(facts: ControlFacts): [full: string, brief: string] {
  const { ref, role, name, target } = facts;
  let tail = "";
  if (facts.values && facts.values.length > 0) tail += valueTail(...facts.values);
  if (facts.options) tail += optionsList(facts.options);
  if (facts.checked === "true") tail += " [checked]";
  if (facts.checked === "mixed") tail += " [mixed]";
  if (facts.selectedTab) tail += " [selected]";
  if (facts.expanded) tail += " [expanded]";
  if (facts.disabled) tail += " [disabled]";
  const short = briefName(name);
  // The overview names only foreign origins (paths are on the full pages).
  const briefTarget = target && !target.startsWith("/") ? originOf(target) : undefined;
  const full = controlHead(ref, role, name, target !== undefined) +
    (target ? ` -> ${target}` : "") + tail;
  const brief = controlHead(ref, role, short, briefTarget !== undefined) +
    (briefTarget ? ` -> ${briefTarget}` : "") + tail;
  return [full, brief];
}

function controlHead(ref: string, role: string, name: string, arrow: boolean): string {
  if (role === "link" && (name !== "" || arrow)) return linkHead(ref, name);
  return `[${ref}] ${roleWord(role)}${name ? ` ${quote(name)}` : ""}`;
}

/**
 * A role as a control line shows it: one word of letters (`button`, `ColorWell`), since it is
 * written unquoted. Any other string, wherever it came from (a page's `role` attribute read
 * as it is, with a line break or a quoted name in it), is shown as `control`: a role never
 * carries page text into the line.
 */
export function roleWord(role: string): string {
  return /^[A-Za-z]{1,40}$/.test(role) ? role : "control";
}

/** A name as the overview shows it: its first {@link BRIEF_NAME_CHARS} characters. */
function briefName(name: string): string {
  return name.length > BRIEF_NAME_CHARS ? `${name.slice(0, BRIEF_NAME_CHARS - 1)}…` : name;
}

/** A link's line head: its arrow or its name says what it is, so no role word (`[e3] "Home"`). */
function linkHead(ref: string, name: string): string {
  return `[${ref}]${name ? ` ${quote(name)}` : ""}`;
}

/** ` = "a"` (or ` = "a", "b"`): how a value reads at the end of a control line. */
export function valueTail(...values: readonly string[]): string {
  return ` = ${values.map((v) => quote(v)).join(", ")}`;
}

/** ` options: "A", "B" (+3 more)` for a select's option names; empty without options. */
export function optionsList(names: readonly string[]): string {
  if (names.length === 0) return "";
  const shown = names.slice(0, OPTIONS_MAX).map((n) => quote(n)).join(", ");
  return ` options: ${shown}${
    names.length > OPTIONS_MAX ? ` (+${names.length - OPTIONS_MAX} more)` : ""
  }`;
}

// A control line's option list as `optionsList()` writes it. Names and values inside a line
// are JSON strings, so ` options: "` cannot occur inside one (their quotes are escaped).
const OPTIONS_TAIL = / options: "(?:[^"\\]|\\.)*"(?:, "(?:[^"\\]|\\.)*")*(?: \(\+\d+ more\))?/;

/**
 * An element line with its option list said to be as before (` options: as before`): for
 * a select the agent was shown word for word in its last view. Other lines as they are.
 */
export function optionsAsBefore(line: string): string {
  return lineRefNumber(line) < 0 ? line : line.replace(OPTIONS_TAIL, " options: as before");
}

/**
 * `## Name` for a heading of `level` (clamped to 1–6). The name is page text read as the
 * line's content: escaped as a text line is (`## \[e3] button "Pay"`), on one line.
 */
export function headingLine(level: number, name: string): string {
  return `${"#".repeat(Math.min(Math.max(level, 1), 6))} ${textLine(name)}`;
}

/** The line opening a child frame's lines. */
export function frameOpenLine(shownUrl: string): string {
  return `[frame ${shownUrl}]`;
}

/** The line closing a child frame's lines. */
export const FRAME_CLOSE = "[/frame]";

/** The bullet a list item's first line starts with. */
export const LIST_BULLET = "- ";

/**
 * A text line as the outline writes it: on one line, and escaped (`escapeLine()`) when it
 * opens like a runtime line (an element line, a frame marker, a block marker, a result or
 * notice), whatever invisible characters or bullets come first: `\[e1] "Home" -> /`. No
 * reader of finished lines takes it for one, and a page cannot forge a ref's line.
 */
export function textLine(text: string): string {
  return escapeLine(oneLine(text));
}

/** A text line's overview form: its first {@link BRIEF_TEXT_CHARS} characters. */
export function briefText(text: string): string {
  return text.length > BRIEF_TEXT_CHARS ? `${text.slice(0, BRIEF_TEXT_CHARS - 1)}…` : text;
}

/** `http://host:port` of a shown absolute target (the rest dropped). */
function originOf(target: string): string {
  return target.replace(/^(https?:\/\/[^/]+).*$/, "$1");
}

// ---- Reading finished lines -------------------------------------------------------------

/**
 * The number of the ref an element line starts with (`[e12] …` → 12, after indentation and
 * an optional list bullet), or -1. Hand-parsed: diffs run it on every line of two views.
 */
export function lineRefNumber(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  if (line.charCodeAt(i) === 45 && line.charCodeAt(i + 1) === 32) i += 2; // "- "
  if (line.charCodeAt(i) !== 91 || line.charCodeAt(i + 1) !== 101) return -1; // "[e"
  let n = 0;
  let j = i + 2;
  for (let c = line.charCodeAt(j); c >= 48 && c <= 57; c = line.charCodeAt(++j)) {
    n = n * 10 + c - 48;
  }
  if (j === i + 2 || line.charCodeAt(j) !== 93) return -1; // "]"
  const after = line.charCodeAt(j + 1);
  return j + 1 === line.length || after === 32 ? n : -1;
}

/** The ref of an element line (`e12`), or undefined. */
export function lineRef(line: string): string | undefined {
  const n = lineRefNumber(line);
  return n < 0 ? undefined : `e${n}`;
}

/**
 * An element line split around its ref token: `lead` (indentation and bullet), the ref's
 * number, and `rest` (everything after `[eN]`); undefined for other lines.
 */
export function splitRef(line: string): { lead: string; ref: number; rest: string } | undefined {
  const n = lineRefNumber(line);
  if (n < 0) return undefined;
  const open = line.indexOf("[e");
  const close = line.indexOf("]", open);
  return { lead: line.slice(0, open), ref: n, rest: line.slice(close + 1) };
}

/** An element line cut to its ref and role word (`[e4] button`), the rest dropped. */
export function refAndRole(line: string): string {
  const parts = splitRef(line);
  if (!parts) return line;
  const word = /^ \S+/.exec(parts.rest)?.[0] ?? "";
  return `${parts.lead}[e${parts.ref}]${word}`;
}

/** Whether a control line ends by reading exactly `value` (` = "value"`). */
export function endsWithValue(line: string, value: string): boolean {
  return line.endsWith(valueTail(value));
}

/** Spaces a line is indented by. */
export function leadingSpaces(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

/** 1-6 for a heading line (`# …`, also as a list item) indented by `indent`, else 0. */
export function headingLevelOf(line: string, indent = leadingSpaces(line)): number {
  let i = indent;
  if (line.charCodeAt(i) === 45 && line.charCodeAt(i + 1) === 32) i += 2;
  let n = 0;
  while (line.charCodeAt(i + n) === 35) n++;
  return n >= 1 && n <= 6 && line.charCodeAt(i + n) === 32 ? n : 0;
}

/** 1 for a `[frame …]` line, -1 for `[/frame]`, else 0. */
export function frameMarker(line: string, indent = leadingSpaces(line)): number {
  if (line.startsWith(FRAME_CLOSE, indent) && line.length === indent + FRAME_CLOSE.length) {
    return -1;
  }
  return line.startsWith("[frame ", indent) && line.endsWith("]") ? 1 : 0;
}
