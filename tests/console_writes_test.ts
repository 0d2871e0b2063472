import assert from "node:assert/strict";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CONSOLE_ALLOWED,
  consoleWrites,
  forbiddenConsoleWrites,
} from "./helpers/console_writes.ts";
import { sourceFiles } from "./helpers/layers.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

Deno.test("console writes: every log line goes through log(), outside the CLI's own output", async () => {
  const files = await sourceFiles(ROOT);
  // A reader that found nothing would pass everything.
  assert.ok(files.length > 80, `only ${files.length} source files found`);
  assert.ok(files.includes("runtime/log.ts") && files.includes("cdp/connection.ts"));
  // The allow-list names no file that does not exist.
  for (const file of Object.keys(CONSOLE_ALLOWED)) assert.ok(files.includes(file), file);
  const found = await forbiddenConsoleWrites(ROOT, files);
  assert.deepEqual(found.map((w) => `${w.file}:${w.line}: ${w.text}`), []);
});

Deno.test("consoleWrites() finds calls and skips comments and strings of URLs", () => {
  const source = [
    "/**",
    " * Deno's console.log prints it.",
    " */",
    "// console.error(x)",
    'const url = "https://example.test/console"; // console.warn here is a comment',
    "  console.error(`omotai: ${line}`);",
    "const w = console.warn;",
    'console["log"]("x");',
    "consoleLog(x);",
    "ctx.session.console.render(x);",
    'const PUBLIC = new Set(["/login", "/console.css"]);',
    "globalThis.console.info(x);",
  ].join("\n");
  assert.deepEqual(consoleWrites("x.ts", source).map((w) => w.line), [6, 7, 8, 12]);
});

Deno.test("forbiddenConsoleWrites() reports a runtime file and lets the allow-list through", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/runtime/tools`, { recursive: true });
    await Deno.mkdir(`${dir}/runtime/cli`, { recursive: true });
    await Deno.writeTextFile(`${dir}/runtime/tools/x.ts`, 'console.error("a");\n');
    await Deno.writeTextFile(`${dir}/runtime/cli/cli.ts`, 'console.log("usage");\n');
    const found = await forbiddenConsoleWrites(dir);
    assert.deepEqual(found.map((w) => `${w.file}:${w.line}`), ["runtime/tools/x.ts:1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
