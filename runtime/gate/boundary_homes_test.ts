/**
 * One boundary: each egress refusal code is raised in its one home, the file docs/egress.md's
 * table names, and nowhere else in product source. The table is the list: a code added to the
 * runtime's own (`RuntimeDenyReason`) must be given a row, and a row's home must raise it.
 */
import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "../../tests/helpers/layers.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const HEADING = "## One boundary: each refusal code, its one home";

/** One row of the table: its codes, and the file they are raised in (none: not a rule). */
interface Row {
  codes: string[];
  home: string | undefined;
}

/** The table under {@link HEADING} in `markdown`. */
function homesTable(markdown: string): Row[] {
  const lines = markdown.split("\n");
  const start = lines.indexOf(HEADING);
  assert.notEqual(start, -1, `docs/egress.md has no "${HEADING}" section`);
  const rows: Row[] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|")) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    if (cells[0] === "code" || /^-+$/.test(cells[0])) continue;
    const codes = [...cells[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);
    const home = /^`([^`]+\.ts)`$/.exec(cells[1])?.[1];
    rows.push({ codes, home });
  }
  return rows;
}

/** `text` with its comments blanked (newlines kept, so offsets and lines stay true). */
function withoutComments(text: string): string {
  return text.replace(
    /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\/\/[^\n]*|\/\*[\s\S]*?\*\/)/g,
    (all, literal: string | undefined) => literal ?? all.replace(/[^\n]/g, " "),
  );
}

/**
 * The lines of `text` where `code` is raised: written as a whole string literal that is not
 * only read (a `case`, a comparison, a member of a type union).
 */
function raises(text: string, code: string): number[] {
  const code_ = withoutComments(text);
  const out: number[] = [];
  for (const m of code_.matchAll(new RegExp(`(["'\`])${code}\\1`, "g"))) {
    const before = code_.slice(Math.max(0, m.index - 16), m.index).trimEnd();
    const after = code_.slice(m.index + m[0].length).trimStart();
    const read = /(?:\bcase|[=!]==?|(?<!\|)\|)$/.test(before) ||
      /^(?:[=!]==?|\|(?!\|))/.test(after);
    if (!read) out.push(code_.slice(0, m.index).split("\n").length);
  }
  return out;
}

/** Product source: the layered folders (tests aside) and the bundled policy modules. */
async function productFiles(): Promise<string[]> {
  const files = await sourceFiles(ROOT);
  for (const dir of ["policies-wasm/modules", "policies-wasm/lib"]) {
    for await (const e of Deno.readDir(join(ROOT, dir))) {
      if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) files.push(`${dir}/${e.name}`);
    }
  }
  return files;
}

/** The members of `RuntimeDenyReason` (runtime/policy/decision.ts). */
function runtimeDenyReasons(decisionTs: string): string[] {
  const union = /export type RuntimeDenyReason =([\s\S]*?);/.exec(withoutComments(decisionTs));
  assert.ok(union, "RuntimeDenyReason not found");
  return [...union[1].matchAll(/"([A-Z][A-Z0-9_]+)"/g)].map((m) => m[1]);
}

Deno.test("raises() counts a code written as a verdict, never a read or a comment", () => {
  const src = [
    `return deny("PRIVATE_ADDRESS", { module: "runtime" });`,
    `const r = failed ? "DNS_FAILED" : undefined;`,
    `refused(question, 'PRIVATE_ADDRESS');`,
    `case "PRIVATE_ADDRESS":`,
    `if (reason === "PRIVATE_ADDRESS" || "PRIVATE_ADDRESS" !== x) {}`,
    `type T = | "PRIVATE_ADDRESS" | "DNS_FAILED";`,
    `// deny("PRIVATE_ADDRESS")`,
    `/** \`PRIVATE_ADDRESS\` "PRIVATE_ADDRESS" */`,
    `const url = "http://x/"; x = "PRIVATE_ADDRESS_NOT";`,
    `const y = a || "PRIVATE_ADDRESS";`,
  ].join("\n");
  assert.deepEqual(raises(src, "PRIVATE_ADDRESS"), [1, 3, 10]);
  assert.deepEqual(raises(src, "DNS_FAILED"), [2]);
});

Deno.test("Boundary: each egress refusal code is raised in its one home (docs/egress.md) and nowhere else", async () => {
  const rows = homesTable(await Deno.readTextFile(join(ROOT, "docs/egress.md")));
  const homed = rows.filter((r) => r.home !== undefined);
  assert.ok(homed.length >= 10, "the table lists the refusal codes and their homes");
  const files = await productFiles();
  const texts = new Map(
    await Promise.all(files.map(async (f) => [f, await Deno.readTextFile(join(ROOT, f))] as const)),
  );
  const problems: string[] = [];
  for (const { codes, home } of homed) {
    if (!texts.has(home!)) {
      problems.push(`${codes.join(", ")}: home ${home} is not a product source file`);
      continue;
    }
    for (const code of codes) {
      if (raises(texts.get(home!)!, code).length === 0) {
        problems.push(`${code}: its home ${home} does not raise it`);
      }
      for (const [file, text] of texts) {
        if (file === home) continue;
        for (const line of raises(text, code)) {
          problems.push(`${code} raised in ${file}:${line}, outside its home ${home}`);
        }
      }
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("Boundary: the homes table names every deny code of the runtime's own, once", async () => {
  const rows = homesTable(await Deno.readTextFile(join(ROOT, "docs/egress.md")));
  const listed = rows.flatMap((r) => r.codes);
  assert.deepEqual(listed.filter((c, i) => listed.indexOf(c) !== i), [], "a code has one row");
  const own = runtimeDenyReasons(
    await Deno.readTextFile(join(ROOT, "runtime/policy/decision.ts")),
  );
  assert.deepEqual(own.filter((c) => !listed.includes(c)), []);
});
