import assert from "node:assert/strict";
import { Redactor } from "../redact/mod.ts";
import { TAB_TITLE_CHARS, tabLine } from "./tabs.ts";

const PLANTED_PW = "Zk4Wq9Rt2Xm7Pv3Lh8Ns5Jd6";

Deno.test("tabLine() redacts a title before its cut and a host name holding the password", () => {
  const redactor = new Redactor();
  redactor.add(PLANTED_PW);
  // The 200-character cut would leave 20 characters of it.
  const title = `${"o".repeat(TAB_TITLE_CHARS - 1 - 20)}${PLANTED_PW} tail`;
  const line = tabLine(
    { index: 1, current: true, title, url: `http://${PLANTED_PW}.test/${PLANTED_PW}?q=1` },
    redactor,
  );
  assert.equal(
    line,
    `1: [current] "${"o".repeat(179)}[redacted] tail" http://[redacted].test/[redacted]`,
  );
});

Deno.test("tabLine() shows a title and URL as before when nothing is held", () => {
  const line = tabLine(
    { index: 0, current: false, title: "x".repeat(250), url: "https://a.test/p?q=1#f" },
    new Redactor(),
  );
  assert.equal(line, `0: "${"x".repeat(199)}…" https://a.test/p`);
});
