import assert from "node:assert/strict";
import { addressRule } from "./address_rule.ts";

const listed = () => true;
const unlisted = () => false;

Deno.test("addressRule() refuses a private name or literal unless its origin is listed exactly", () => {
  for (const host of ["10.0.0.6", "127.0.0.1", "[::1]", "localhost", "printer.localhost"]) {
    assert.equal(addressRule({ host }, unlisted), "PRIVATE_ADDRESS", host);
    assert.equal(addressRule({ host }, listed), undefined, host);
  }
  assert.equal(addressRule({ host: "portal.test" }, unlisted), undefined);
});

Deno.test("addressRule() judges the DNS answer: any private address refuses, none at all is DNS_FAILED", () => {
  const rebind = { host: "rebind.test", addresses: ["203.0.113.7", "10.0.0.9"] };
  assert.equal(addressRule(rebind, unlisted), "PRIVATE_ADDRESS");
  assert.equal(addressRule(rebind, listed), undefined);
  assert.equal(addressRule({ host: "pub.test", addresses: ["203.0.113.7"] }, unlisted), undefined);
  // A failed lookup refuses even a listed origin: there is nothing to dial.
  assert.equal(addressRule({ host: "gone.test", addresses: [] }, listed), "DNS_FAILED");
});

Deno.test("addressRule() asks whether the origin is listed only for a private destination", () => {
  let asked = 0;
  const count = () => {
    asked++;
    return false;
  };
  addressRule({ host: "portal.test", addresses: ["203.0.113.7"] }, count);
  assert.equal(asked, 0);
  addressRule({ host: "127.0.0.1" }, count);
  assert.equal(asked, 1);
});
