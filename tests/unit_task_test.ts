import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FOLDERS = ["runtime", "cdp", "vault", "ui"];
/** What a test that starts Chromium or a PostgreSQL cluster calls or imports. */
const STARTS_BROWSER =
  /\b(?:findBrowser|launchBrowser|startPostgres)\b|helpers\/operator_browser\.ts/;

async function unitTestFiles(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith("_test.ts")) out.push(path);
    }
  };
  for (const f of FOLDERS) await walk(f);
  return out.sort();
}

Deno.test("task test:unit leaves out exactly the unit tests that start Chromium or PostgreSQL", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const task: string = config.tasks["test:unit"];
  // `**/` globs: deno resolves a plain path of `--ignore` against the first folder given.
  const ignored = (task.match(/--ignore=([^'\s]+)/)?.[1] ?? "").split(",").filter(Boolean)
    .map((g) => g.replace(/^\*\*\//, "")).sort();
  const files = await unitTestFiles();
  assert.ok(files.length > 50, `only ${files.length} unit test files found`);
  const browser: string[] = [];
  for (const f of files) {
    if (STARTS_BROWSER.test(await Deno.readTextFile(join(ROOT, f)))) browser.push(f);
  }
  assert.ok(browser.includes("cdp/chromium_process_test.ts"), "the rule finds a browser test");
  assert.ok(browser.includes("runtime/store/pg_database_test.ts"), "and a database test");
  assert.deepEqual(ignored, browser);
  for (const f of FOLDERS) assert.ok(task.includes(` ${f}/`), `test:unit runs ${f}/`);
  // The full gate still runs everything.
  assert.ok(!(config.tasks.test as string).includes("--ignore"));
});
