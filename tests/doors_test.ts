import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Doors, MARKER } from "./helpers/doors.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function tree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "doors_" });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  return root;
}

Deno.test("Doors.run() points imports at mod.ts, adds what is missing, keeps the hand-written part", async () => {
  const root = await tree({
    "runtime/net/origin.ts":
      "export function normalizeOrigin(s: string): string {\n  return s;\n}\n" +
      "export interface Origin {\n  host: string;\n}\nexport type Port = number;\n",
    "runtime/net/paths.ts": 'export const ROOT = "/";\n',
    // A hand-written mod.ts that itself reaches into another folder.
    "runtime/net/mod.ts":
      '/**\n * Net.\n *\n * @module\n */\nexport { ROOT } from "./paths.ts";\n' +
      'export { CodedError } from "../../shared/coded_error.ts";\n',
    "shared/coded_error.ts": "export class CodedError extends Error {}\n",
    "runtime/gate/gate.ts": 'import { normalizeOrigin, type Origin } from "../net/origin.ts";\n' +
      'import type { Port } from "../net/origin.ts";\nimport { ROOT } from "../net/paths.ts";\n\n' +
      "export const g = (o: Origin, p: Port): string => normalizeOrigin(o.host) + ROOT + p;\n",
    "runtime/policy/p.ts":
      'import * as paths from "../net/paths.ts";\n\nexport const r = paths.ROOT;\n',
  });
  try {
    const dry = new Doors(root);
    assert.equal(await dry.run(false), true);
    assert.equal(
      await Deno.readTextFile(join(root, "runtime/gate/gate.ts")).then((t) =>
        t.includes("origin.ts")
      ),
      true,
      "a dry run writes nothing",
    );
    const doors = new Doors(root);
    assert.equal(await doors.run(true), true);
    assert.deepEqual(doors.problems, [
      'runtime/policy/p.ts: import … from "../net/paths.ts": only named imports can go through runtime/net/mod.ts',
    ]);
    const mod = await Deno.readTextFile(join(root, "runtime/net/mod.ts"));
    assert.ok(
      mod.startsWith(
        '/**\n * Net.\n *\n * @module\n */\nexport { ROOT } from "./paths.ts";\n' +
          'export { CodedError } from "../../shared/mod.ts";\n',
      ),
      mod,
    );
    assert.ok(mod.includes(`${MARKER}\nexport { normalizeOrigin } from "./origin.ts";\n`), mod);
    assert.ok(mod.includes('export type { Origin, Port } from "./origin.ts";\n'), mod);
    assert.ok(!mod.includes("export *"));
    const gate = await Deno.readTextFile(join(root, "runtime/gate/gate.ts"));
    assert.ok(
      gate.startsWith(
        'import { normalizeOrigin, type Origin, type Port, ROOT } from "../net/mod.ts";\n\n',
      ),
      gate,
    );
    // A type moves to another file and its importer names the new file: the kept entry of the
    // old file goes, the new one comes, the importer's two imports become one again.
    await Deno.writeTextFile(
      join(root, "runtime/net/origin.ts"),
      "export function normalizeOrigin(s: string): string {\n  return s;\n}\n" +
        "export interface Origin {\n  host: string;\n}\n",
    );
    await Deno.writeTextFile(
      join(root, "runtime/net/paths.ts"),
      'export const ROOT = "/";\nexport type Port = number;\n',
    );
    await Deno.writeTextFile(
      join(root, "runtime/gate/gate.ts"),
      gate.replace("type Port, ", "").replace(
        "\n\n",
        '\nimport type { Port } from "../net/paths.ts";\n\n',
      ),
    );
    const moved = new Doors(root);
    assert.equal(await moved.run(true), true);
    const mod2 = await Deno.readTextFile(join(root, "runtime/net/mod.ts"));
    assert.ok(mod2.includes('export type { Origin } from "./origin.ts";\n'), mod2);
    assert.ok(mod2.includes('export type { Port } from "./paths.ts";\n'), mod2);
    assert.ok(
      moved.report.includes(
        "runtime/net/mod.ts: drops Port (runtime/net/origin.ts no longer exports it)",
      ),
    );
    const gate2 = await Deno.readTextFile(join(root, "runtime/gate/gate.ts"));
    assert.ok(
      gate2.startsWith(
        'import { normalizeOrigin, type Origin, type Port, ROOT } from "../net/mod.ts";\n\n',
      ),
      gate2,
    );
    // Run again: nothing left to change, and the namespace import is still reported.
    const again = new Doors(root);
    assert.equal(await again.run(false), false);
    assert.equal(again.problems.length, 1);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("Doors.run() finds nothing to change in this repository", async () => {
  const doors = new Doors(ROOT);
  const changed = await doors.run(false);
  assert.deepEqual(doors.problems, []);
  assert.equal(changed, false, doors.report.join("\n"));
});
