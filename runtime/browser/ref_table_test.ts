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

Deno.test("RefTable.adopt() moves a ref to a new main-frame element of the same tab only", () => {
  const refs = new RefTable();
  const main = (loaderId: string, id: number, tabId = "T"): RefTarget => ({
    ...t(loaderId, id),
    tabId,
    mainFrame: true,
  });
  const old = refs.issue(main("L1", 10));
  const fresh = refs.issue(main("L2", 20));
  assert.equal(refs.nextNumber, 3);
  assert.equal(refs.adopt(old, fresh), true);
  assert.equal(refs.lookup(old).loaderId, "L2");
  assert.throws(() => refs.lookup(fresh), UnknownRefError, "the fresh ref is forgotten");
  assert.equal(refs.issue(main("L2", 20)), old, "the element keeps its adopted ref");
  assert.notEqual(refs.issue(main("L1", 10)), old, "the old element would get a new ref");
  const other = refs.issue(main("L3", 30, "T2"));
  const inFrame = refs.issue(t("L2", 40));
  assert.equal(refs.adopt(old, other), false, "another tab");
  assert.equal(refs.adopt(old, inFrame), false, "a child frame's element");
  assert.equal(refs.adopt(old, "e999"), false);
});
