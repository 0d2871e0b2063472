import assert from "node:assert/strict";
import { UnknownRefError } from "../errors.ts";
import { RefTable, type RefTarget } from "./ref_table.ts";

const t = (loaderId: string, backendNodeId: number, docId = "d1"): RefTarget => ({
  sessionId: "S",
  tabId: "T",
  frameId: "F",
  loaderId,
  docId,
  backendNodeId,
});

Deno.test("RefTable.issue() keeps refs stable per element and never reuses numbers", () => {
  const refs = new RefTable();
  const a = refs.issue(t("L1", 10));
  assert.equal(refs.issue(t("L1", 10)), a);
  const b = refs.issue(t("L1", 11));
  const c = refs.issue(t("L2", 10, "d2"));
  assert.deepEqual([a, b, c], ["e1", "e2", "e3"]);
  assert.equal(refs.lookup("e1").loaderId, "L1");
});

Deno.test("RefTable.lookup() refuses refs never issued and malformed refs", () => {
  const refs = new RefTable();
  refs.issue(t("L1", 1));
  for (const bad of ["e2", "e0", "x1", "e01", "", "e1 "]) {
    assert.throws(() => refs.lookup(bad), UnknownRefError, bad);
  }
});
