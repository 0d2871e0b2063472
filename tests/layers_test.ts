import assert from "node:assert/strict";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  bypassedDoors,
  folderGraph,
  forbiddenImports,
  importCircles,
  type ImportEdge,
  readImports,
  sourceFiles,
} from "./helpers/layers.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

Deno.test("layers: no import runs up a layer or crosses a permission boundary, no circles", async () => {
  const files = await sourceFiles(ROOT);
  const edges = await readImports(ROOT, files);
  // A reader that found nothing would pass everything.
  assert.ok(files.length > 80, `only ${files.length} source files found`);
  assert.ok(edges.length > 200, `only ${edges.length} imports found`);
  assert.ok(files.includes("runtime/tools/tool.ts") && files.includes("cdp/mod.ts"));
  assert.deepEqual(forbiddenImports(edges), []);
  assert.deepEqual(bypassedDoors(edges), []);
  assert.deepEqual(importCircles(edges), []);
  const graph = folderGraph(edges);
  assert.ok(graph.get("runtime/browser")?.has("cdp"), "browser/ imports cdp/");
  assert.equal(graph.get("runtime/browser")?.has("runtime/egress"), false);
  assert.equal(graph.get("runtime/browser")?.has("runtime/gate"), false);
});

Deno.test("forbiddenImports() catches a layer violation, a leaf import and a ui value import", () => {
  const edges: ImportEdge[] = [
    { from: "runtime/browser/x.ts", to: "runtime/gate/gate.ts", typeOnly: true },
    { from: "cdp/x.ts", to: "runtime/errors.ts", typeOnly: false },
    { from: "vault/x.ts", to: "runtime/log.ts", typeOnly: false },
    { from: "runtime/proxy/x.ts", to: "runtime/errors.ts", typeOnly: false },
    { from: "ui/x.ts", to: "runtime/gate/gate.ts", typeOnly: false },
    { from: "ui/y.ts", to: "runtime/gate/gate.ts", typeOnly: true },
    { from: "runtime/policy/x.ts", to: "runtime/net/origin.ts", typeOnly: false },
    { from: "runtime/main.ts", to: "runtime/cli/cli.ts", typeOnly: false },
  ];
  assert.deepEqual(forbiddenImports(edges).map((p) => p.split(" ")[0]), [
    "runtime/browser/x.ts",
    "cdp/x.ts",
    "vault/x.ts",
    "runtime/proxy/x.ts",
    "ui/x.ts",
  ]);
});

Deno.test("bypassedDoors() catches a reach past mod.ts and an own-folder mod.ts, not an exception", () => {
  const e = (from: string, to: string, via?: "url" | "dynamic"): ImportEdge => ({
    from,
    to,
    typeOnly: false,
    ...(via ? { via } : {}),
  });
  assert.deepEqual(
    bypassedDoors([
      e("runtime/gate/gate.ts", "runtime/net/origin.ts"),
      e("runtime/gate/gate.ts", "runtime/gate/mod.ts"),
      e("runtime/main.ts", "runtime/cli/cli.ts", "dynamic"),
      e("runtime/gate/gate.ts", "runtime/net/mod.ts"),
      e("runtime/gate/gate.ts", "runtime/gate/boundary.ts"),
      e("runtime/proxy/proxy_decide.ts", "runtime/net/addresses.ts"),
      e("runtime/main.ts", "runtime/cli/main.ts", "url"),
      e("runtime/gate/gate.ts", "policies-wasm/dist/x.ts"),
    ]).map((p) => p.split(" ")[0]),
    ["runtime/gate/gate.ts", "runtime/gate/gate.ts", "runtime/main.ts"],
  );
});

Deno.test("importCircles() finds a circle through three files and none in a tree", () => {
  const e = (from: string, to: string): ImportEdge => ({ from, to, typeOnly: false });
  assert.deepEqual(importCircles([e("a.ts", "b.ts"), e("b.ts", "c.ts"), e("c.ts", "a.ts")]), [
    ["a.ts", "b.ts", "c.ts", "a.ts"],
  ]);
  assert.deepEqual(importCircles([e("a.ts", "b.ts"), e("a.ts", "c.ts"), e("b.ts", "c.ts")]), []);
});
