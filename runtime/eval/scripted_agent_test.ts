import assert from "node:assert/strict";
import { findRef } from "./scripted_agent.ts";

const OMOTAI = `path: /login
[e2] "Orders" -> /orders
- [e7] "Sign in" -> /login
[e25] textbox "Username"
[e26] password "Password"
[e27] button "Sign in"
[e30] "Help"`;

const PLAYWRIGHT = `- link "Orders" [ref=e5] [cursor=pointer]:
  - /url: /orders
- textbox "Password" [ref=e9]
- button "Sign in" [ref=e14]`;

Deno.test("findRef reads Omotai's outline: links by their target, password fields", () => {
  assert.equal(findRef(OMOTAI, { role: "link", name: "Orders" }), "e2");
  assert.equal(findRef(OMOTAI, { role: "textbox", name: "Password" }), "e26");
  assert.equal(findRef(OMOTAI, { role: "button", name: "Sign in" }), "e27");
  assert.equal(findRef(OMOTAI, { role: "link", name: "Sign in" }), "e7");
  // An overview's link: its name, no role word, no arrow.
  assert.equal(findRef(OMOTAI, { role: "link", name: "Help" }), "e30");
  assert.equal(findRef(OMOTAI, { role: "button", name: "Help" }), undefined);
});

Deno.test("findRef reads Playwright MCP's snapshot", () => {
  assert.equal(findRef(PLAYWRIGHT, { role: "link", name: "Orders" }), "e5");
  assert.equal(findRef(PLAYWRIGHT, { role: "textbox", name: "Password" }), "e9");
  assert.equal(findRef(PLAYWRIGHT, { role: "button", name: "Sign in" }), "e14");
});

Deno.test("findRef needs the exact name and the role", () => {
  assert.equal(findRef(OMOTAI, { role: "button", name: "Orders" }), undefined);
  assert.equal(findRef(OMOTAI, { role: "link", name: "Order" }), undefined);
  assert.equal(findRef("", { role: "button", name: "Go" }), undefined);
});
