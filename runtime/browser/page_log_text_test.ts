import assert from "node:assert/strict";
import type { Protocol } from "../../cdp/mod.ts";
import { formatArgs, renderValue, scrubUrls } from "./page_log_text.ts";

function str(value: string): Protocol.Runtime.RemoteObject {
  return { type: "string", value };
}

Deno.test("formatArgs() applies %s substitutions and drops %c styles", () => {
  assert.equal(
    formatArgs([
      str("%cBig %s, %d%%"),
      str("color:red"),
      str("a"),
      { type: "number", value: 5 },
      str("tail"),
    ]),
    "Big a, 5% tail",
  );
  assert.equal(formatArgs([str("%s and %s"), str("one")]), "one and %s");
  assert.equal(formatArgs([{ type: "number", value: 1 }, str("%s")]), "1 %s");
});

Deno.test("renderValue() renders from value, preview and description only", () => {
  assert.equal(renderValue({ type: "undefined" }), "undefined");
  assert.equal(renderValue({ type: "object", subtype: "null", value: null }), "null");
  assert.equal(
    renderValue({ type: "number", unserializableValue: "NaN", description: "NaN" }),
    "NaN",
  );
  assert.equal(renderValue({ type: "bigint", unserializableValue: "5n", description: "5n" }), "5n");
  assert.equal(renderValue({ type: "boolean", value: true }), "true");
  assert.equal(
    renderValue({ type: "function", className: "Function", description: "function f() {}" }),
    "function f() {}",
  );
  assert.equal(
    renderValue({
      type: "object",
      subtype: "array",
      className: "Array",
      description: "Array(3)",
      preview: {
        type: "object",
        subtype: "array",
        description: "Array(3)",
        overflow: true,
        properties: [
          { name: "0", type: "number", value: "1" },
          {
            name: "1",
            type: "object",
            value: "Object",
            valuePreview: {
              type: "object",
              description: "Object",
              overflow: false,
              properties: [],
            },
          },
        ],
      },
    }),
    "Array(3) [1, Object, …]",
  );
  assert.equal(
    renderValue({
      type: "object",
      className: "Map",
      description: "Map(1)",
      preview: {
        type: "object",
        subtype: "map",
        description: "Map(1)",
        overflow: false,
        properties: [{ name: "size", type: "number", value: "1" }],
      },
    }),
    "Map(1) {size: 1}",
  );
  assert.equal(
    renderValue({
      type: "object",
      subtype: "error",
      className: "Error",
      description: "Error: x\n    at f",
      preview: { type: "object", subtype: "error", overflow: false, properties: [] },
    }),
    "Error: x\n    at f",
    "an error shows its description (its lines are joined and scrubbed when kept)",
  );
});

Deno.test("scrubUrls() cuts queries and fragments off URL-like words only", () => {
  assert.equal(scrubUrls("see https://a.test/p?x=1#y, then"), "see https://a.test/p then");
  assert.equal(scrubUrls("ws://h:1/s?t=1 //cdn.test/a?b /rel?c=d"), "ws://h:1/s //cdn.test/a /rel");
  assert.equal(scrubUrls("Are you sure? 50% off"), "Are you sure? 50% off");
  assert.equal(scrubUrls('"https://h.test?tok=1"'), '"https://h.test"');
});

Deno.test("scrubUrls() cuts a URL nested in a query and stays linear on hostile text", () => {
  assert.equal(scrubUrls("x?redirect=https://evil.test/?token=1"), "x?redirect=https://evil.test/");
  const hostile = `${"a/".repeat(50_000)}${"b".repeat(50_000)}`;
  // bench/hot_paths_bench.ts times it.
  assert.equal(scrubUrls(hostile), hostile);
});
