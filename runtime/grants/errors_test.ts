import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import { GrantError } from "./errors.ts";

Deno.test("GrantError carries its code, its class name and is an OmotaiError", () => {
  const err = new GrantError("GRANT_WRONG_ORIGIN", "the grant does not allow this origin");
  assert.equal(err.code, "GRANT_WRONG_ORIGIN");
  assert.equal(err.name, "GrantError");
  assert.equal(err.message, "the grant does not allow this origin");
  assert.ok(err instanceof OmotaiError);
});
