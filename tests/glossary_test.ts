import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { identifiersOf, KEPT, retiredIn, retiredNames } from "./helpers/glossary.ts";
import { sourceFiles } from "./helpers/layers.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

Deno.test("retiredNames(): no product identifier is spelled with a word docs/glossary.md retired", async () => {
  const files = await sourceFiles(ROOT);
  // A reader that found nothing would pass everything.
  assert.ok(files.length > 80, `only ${files.length} source files found`);
  assert.ok(files.includes("runtime/browser/page_log.ts") && files.includes("ui/console_app.ts"));
  const found = await retiredNames(ROOT, files);
  assert.deepEqual(found.map((r) => `${r.file}:${r.line}: ${r.name} (use ${r.use})`), []);
});

Deno.test("identifiersOf() reads code only: comments, strings, template text and regexps are left out", () => {
  const source = [
    "/** A BlockedRequest in a doc comment. */",
    "// consoleLog in a line comment",
    "const a = \"blockedInString\", b = 'consoleLogInString';",
    "const re = /blockedInRegex[/]x/g, half = a / 2 / b;",
    "const t = `blockedInTemplate ${inHole + `${deepHole}`} more text ${second}`;",
    "if (x) return /deniedRegex/.test(t);",
    "const last = { key: 1 };",
  ].join("\n");
  const ids = identifiersOf(source);
  assert.deepEqual(ids.map((i) => i.name), [
    "const",
    "a",
    "b",
    "const",
    "re",
    "half",
    "a",
    "b",
    "const",
    "t",
    "inHole",
    "deepHole",
    "second",
    "if",
    "x",
    "return",
    "test",
    "t",
    "const",
    "last",
    "key",
  ]);
  assert.deepEqual(ids.find((i) => i.name === "last")?.line, 7);
  assert.deepEqual(ids.find((i) => i.name === "second")?.line, 5);
});

Deno.test("identifiersOf() finds every exported declaration of the product (the reader never loses its place)", async () => {
  const files = await sourceFiles(ROOT);
  const missed: string[] = [];
  for (const file of files) {
    const source = await Deno.readTextFile(join(ROOT, file));
    const ids = new Set(identifiersOf(source).map((i) => i.name));
    const declared = source.matchAll(
      /^export (?:async )?(?:function\*?|class|const|let|interface|type|enum) ([\w$]+)/gm,
    );
    for (const [, name] of declared) if (!ids.has(name)) missed.push(`${file}: ${name}`);
  }
  assert.deepEqual(missed, []);
});

Deno.test("retiredIn() names the file and line of each retired spelling and passes the kept names", () => {
  const source = [
    "export interface BlockedRequest { reason: string }",
    "const consoleLog = new PageLog();",
    "function onDenied(): void {}",
    'const code = CONFIRM_DENIED ?? "DOMAIN_DENIED";',
    'session.send("Network.setBlockedURLs", {}); e.blockedReason;',
    "const denied = verdict.denied; // the verdict itself",
    "const levels = CONSOLE_LEVELS, tool = consoleMessagesTool;",
  ].join("\n");
  assert.deepEqual(
    retiredIn("x.ts", source).map((r) => `${r.file}:${r.line}: ${r.name}`),
    ["x.ts:1: BlockedRequest", "x.ts:2: consoleLog", "x.ts:3: onDenied", "x.ts:7: CONSOLE_LEVELS"],
  );
});

Deno.test("KEPT: every name the check lets through is listed in docs/glossary.md", async () => {
  const glossary = await Deno.readTextFile(join(ROOT, "docs/glossary.md"));
  for (const name of Object.keys(KEPT)) assert.ok(glossary.includes(`\`${name}\``), name);
});
