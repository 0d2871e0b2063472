/**
 * The one-log-path check: every line the runtime writes for an operator goes through
 * `log()` (`runtime/log.ts`), which passes it through the process redactor first. A direct
 * `console.*` call in a source file (tests and benchmarks aside) skips that filter, so it is
 * reported unless the file is one of the few whose stdout/stderr output *is* the product: the
 * `omotai` command's own output to the person who typed it. `cdp/` and `vault/` stay leaves:
 * they take a logger from their caller and never write to stderr themselves. ("Console" in
 * our names is the operator console; here it is only the JS global: docs/glossary.md.)
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./layers.ts";

const COMMAND_OUTPUT = "the command's own output (usage, results, errors) to its user";

/** Files that may call the global `console` directly (stdout/stderr), each with why. */
export const CONSOLE_ALLOWED: Readonly<Record<string, string>> = {
  "runtime/log.ts": "the one log path: every line passes the filters (the redactor) first",
  "runtime/cli/cli.ts": "usage, version, the start banner and the stdio start lines",
  "runtime/cli/agent_cmd.ts": COMMAND_OUTPUT,
  "runtime/cli/audit_cmd.ts": COMMAND_OUTPUT,
  "runtime/cli/domain_cmd.ts": COMMAND_OUTPUT,
  "runtime/cli/eval_cmd.ts": COMMAND_OUTPUT,
  "runtime/cli/grant_cmd.ts": COMMAND_OUTPUT,
  "runtime/cli/policy_cmd.ts": COMMAND_OUTPUT,
  "runtime/cli/secret_cmd.ts": COMMAND_OUTPUT,
  "runtime/cli/tenant_cmd.ts": COMMAND_OUTPUT,
  "runtime/launcher/launcher.ts":
    "the omotai command before the runtime runs: its plan and launch errors (no redactor yet)",
  "runtime/launcher/install.ts": "`deno task install`'s own output",
  "runtime/launcher/compile.ts": "`deno task compile`'s own output",
  "ui/console_app.ts":
    "`ui/` imports no runtime value (types only): its fallback logger when the caller hands " +
    "in none; `cli/start.ts` hands in `log()`",
};

/** One direct console write. */
export interface ConsoleWrite {
  file: string;
  line: number;
  text: string;
}

/** The global `console` (not a field named so, nor `/console.css`), a writing method or `[`. */
const CONSOLE_RE =
  /(?<![\w$.\/-])(?:globalThis\.)?console\s*(?:\.\s*(?:log|error|warn|info|debug|trace|dir|dirxml|table|group|groupCollapsed|assert|count|time|timeEnd|timeLog)\b|\[)/;

/** The code of one line, comments left out (JSDoc and `//` lines, trailing `// ...`). */
function codeOf(line: string): string {
  const t = line.trim();
  if (t.startsWith("//") || t.startsWith("/*") || t.startsWith("*")) return "";
  // A trailing comment; `://` of a URL in a string is not one.
  return line.replace(/(^|\s)\/\/.*$/, "$1");
}

/** Direct console writes in `text` (the source of `file`). */
export function consoleWrites(file: string, text: string): ConsoleWrite[] {
  const out: ConsoleWrite[] = [];
  text.split("\n").forEach((line, i) => {
    if (CONSOLE_RE.test(codeOf(line))) out.push({ file, line: i + 1, text: line.trim() });
  });
  return out;
}

/** Every direct console write in the source files under `root` outside the allow-list. */
export async function forbiddenConsoleWrites(
  root: string,
  files?: readonly string[],
): Promise<ConsoleWrite[]> {
  const out: ConsoleWrite[] = [];
  for (const file of files ?? await sourceFiles(root)) {
    if (file in CONSOLE_ALLOWED) continue;
    out.push(...consoleWrites(file, await Deno.readTextFile(join(root, file))));
  }
  return out;
}

if (import.meta.main) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const found = await forbiddenConsoleWrites(root);
  for (const w of found) console.log(`FORBIDDEN ${w.file}:${w.line}: ${w.text}`);
  if (found.length > 0) Deno.exit(1);
}
