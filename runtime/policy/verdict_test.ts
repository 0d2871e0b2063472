import assert from "node:assert/strict";
import { combine, type ModuleVerdict, parseModuleOutput } from "./verdict.ts";

const v = (
  module: string,
  decision: ModuleVerdict["decision"],
  reason: string,
  kind: ModuleVerdict["kind"] = "rule",
): ModuleVerdict => ({ module, kind, decision, reason });

Deno.test("combine() lets deny beat confirm beat allow", () => {
  assert.equal(combine([v("a", "allow", "OK"), v("b", "confirm", "WRITE")]).decision, "confirm");
  assert.equal(
    combine([v("a", "allow", "OK"), v("b", "confirm", "WRITE"), v("c", "deny", "NO")]).reason,
    "NO",
  );
  assert.equal(combine([v("a", "allow", "OK")]).decision, "allow");
});

Deno.test("combine() denies when nothing allows, and ignores a classifier's allow", () => {
  assert.deepEqual(combine([]), { decision: "deny", reason: "NO_POLICY_ALLOWED" });
  assert.equal(combine([v("sem", "allow", "LOOKS_FINE", "classifier")]).decision, "deny");
  assert.equal(
    combine([v("base", "allow", "OK"), v("sem", "confirm", "ODD", "classifier")]).decision,
    "confirm",
  );
});

Deno.test("combine() does not depend on module order or duplicates", () => {
  const set = [
    v("a", "deny", "B_REASON"),
    v("b", "deny", "A_REASON"),
    v("c", "allow", "OK"),
    v("d", "confirm", "W"),
  ];
  const expected = combine(set);
  for (let i = 0; i < 20; i++) {
    const shuffled = [...set, ...set.slice(0, i % 4)].sort(() => Math.random() - 0.5);
    assert.deepEqual(combine(shuffled), expected);
  }
  assert.equal(expected.reason, "A_REASON");
});

Deno.test("parseModuleOutput() turns junk into a POLICY_ERROR deny", () => {
  assert.deepEqual(parseModuleOutput('{"decision":"allow","reason":"OK"}'), {
    decision: "allow",
    reason: "OK",
  });
  for (
    const junk of [
      "",
      "nope",
      '{"decision":"maybe","reason":"X"}',
      '{"decision":"allow"}',
      '{"decision":"allow","reason":"lower"}',
      null,
    ]
  ) {
    const out = parseModuleOutput(junk);
    assert.equal(out.decision, "deny", String(junk));
    assert.equal(out.reason, "POLICY_ERROR");
  }
});
