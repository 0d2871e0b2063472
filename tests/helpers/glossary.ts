/**
 * The names check of docs/glossary.md: one word per idea, so a retired word must not come
 * back as an identifier of the product (runtime/, cdp/, vault/, ui/, shared/; tests aside).
 * Only identifiers are read: comments, strings, template text and regular expressions are
 * left out, since they carry the external names the glossary keeps (CDP methods, tool names,
 * the words the model reads, reason codes).
 *
 * @module
 */
import { join } from "node:path";
import { sourceFiles } from "./layers.ts";

/** One retired spelling: what finds it, the idea's word to use instead. */
export interface RetiredWord {
  /** Matched against each whole identifier. */
  pattern: RegExp;
  /** The word of docs/glossary.md for the idea. */
  use: string;
}

/** The retired spellings of an idea, as identifiers. */
export const RETIRED: readonly RetiredWord[] = [
  // A refusal is "refused"; "blocked" names only a page whose main thread sleeps.
  { pattern: /blocked/i, use: "refused (a refusal), not blocked" },
  // "denied" is a verdict; a compound built on it (`DeniedRequest`, `onDenied`) names the act.
  {
    pattern:
      /[a-z0-9](Denied|Denial)|(Denied|Denial)[A-Z0-9_]|[A-Za-z0-9]_DENIED|DENIED_|denied_|_denied/,
    use: "refused (the act) or deny (the verdict)",
  },
  // What a page logged is the page log; "console" is the operator console.
  {
    pattern:
      /console_?(log|level|limit|message|query|view|text|error|output|entr(y|ies)|call)s?(?![a-z])/i,
    use: "pageLog / PageLog… (the page log), not console…",
  },
];

/**
 * Identifiers that match a retired spelling and stay, each with why: external names (CDP,
 * the MCP tool names), persisted reason codes and policy keys, and the one other idea a word
 * keeps (docs/glossary.md lists them all).
 */
export const KEPT: Readonly<Record<string, string>> = {
  setBlockedURLs: "CDP `Network.setBlockedURLs`",
  blockedReason: "CDP `Network.loadingFailed.blockedReason`",
  BLOCKED_SILENCE_MS: "a blocked page: its main thread sleeps on what never comes (run_delay.ts)",
  CONFIRM_DENIED: "reason code",
  DOMAIN_DENIED: "reason code",
  PATH_DENIED: "reason code",
  PUSH_DENIED: "reason code",
  denied_paths: "policy key",
  deniedPathSchema: "the schema of the policy key `denied_paths`",
  consoleMessagesTool: "the MCP tool `browser_console_messages` (Playwright MCP's name)",
  ConsoleError: "the operator console's error (ui/console_error.ts)",
};

/** One identifier of a source, with its line. */
export interface Identifier {
  name: string;
  line: number;
}

/** Words after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set([
  "return",
  "typeof",
  "case",
  "do",
  "else",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "instanceof",
  "yield",
  "await",
]);

/**
 * The identifiers of a TypeScript source, in order: words of the code outside comments,
 * string literals, template text (its `${…}` expressions are code) and regular expressions.
 */
export function identifiersOf(source: string): Identifier[] {
  const out: Identifier[] = [];
  const n = source.length;
  let i = 0;
  let line = 1;
  let depth = 0;
  /** The brace depth at which each open `${` of a template closes. */
  const holes: number[] = [];
  /** Whether a `/` here starts a regular expression. */
  let regexOk = true;
  const skipTo = (end: number) => {
    for (let k = i; k < end; k++) if (source[k] === "\n") line++;
    i = end;
  };
  /** Template text from `i` to its closing backtick, or into its next `${`. */
  const template = () => {
    let k = i;
    while (k < n) {
      if (source[k] === "\\") k += 2;
      else if (source[k] === "`") {
        skipTo(k + 1);
        regexOk = false;
        return;
      } else if (source[k] === "$" && source[k + 1] === "{") {
        depth++;
        holes.push(depth);
        skipTo(k + 2);
        regexOk = true;
        return;
      } else k++;
    }
    skipTo(n);
  };
  while (i < n) {
    const c = source[i];
    const next = source[i + 1];
    if (c === "\n") {
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      i = end < 0 ? n : end;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      skipTo(end < 0 ? n : end + 2);
    } else if (c === '"' || c === "'") {
      let k = i + 1;
      while (k < n && source[k] !== c && source[k] !== "\n") k += source[k] === "\\" ? 2 : 1;
      skipTo(Math.min(k + 1, n));
      regexOk = false;
    } else if (c === "`") {
      i++;
      template();
    } else if (c === "/" && regexOk) {
      let k = i + 1;
      let inClass = false;
      while (k < n && source[k] !== "\n") {
        const d = source[k];
        if (d === "\\") k++;
        else if (d === "[") inClass = true;
        else if (d === "]") inClass = false;
        else if (d === "/" && !inClass) break;
        k++;
      }
      k++;
      while (k < n && /[a-z]/.test(source[k])) k++;
      skipTo(k);
      regexOk = false;
    } else if (/[A-Za-z_$]/.test(c)) {
      const m = /^[\w$]+/.exec(source.slice(i, i + 200))!;
      out.push({ name: m[0], line });
      i += m[0].length;
      regexOk = BEFORE_REGEX.has(m[0]);
    } else if (/[0-9]/.test(c)) {
      i += /^[\w.]+/.exec(source.slice(i, i + 100))![0].length;
      regexOk = false;
    } else if (c === "}" && holes.at(-1) === depth) {
      holes.pop();
      depth--;
      i++;
      template();
    } else {
      if (c === "{") depth++;
      if (c === "}") depth--;
      regexOk = c !== ")" && c !== "]" && c !== "}";
      i++;
    }
  }
  return out;
}

/** An identifier spelled with a retired word, where it is. */
export interface RetiredName {
  file: string;
  line: number;
  name: string;
  use: string;
}

/** The retired spellings among the identifiers of `source` (the file `file`). */
export function retiredIn(file: string, source: string): RetiredName[] {
  const out: RetiredName[] = [];
  for (const { name, line } of identifiersOf(source)) {
    if (name in KEPT) continue;
    const rule = RETIRED.find((r) => r.pattern.test(name));
    if (rule) out.push({ file, line, name, use: rule.use });
  }
  return out;
}

/** Every retired spelling among the product's identifiers under `root`. */
export async function retiredNames(
  root: string,
  files?: readonly string[],
): Promise<RetiredName[]> {
  const out: RetiredName[] = [];
  for (const file of files ?? await sourceFiles(root)) {
    out.push(...retiredIn(file, await Deno.readTextFile(join(root, file))));
  }
  return out;
}
