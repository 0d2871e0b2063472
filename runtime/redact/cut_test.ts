import assert from "node:assert/strict";
import { CUT_READ_MARGIN, redactClip, redactCut } from "./cut.ts";
import { REDACTED, Redactor } from "./redactor.ts";

const PW = "Qv7Rk2Lm9Xw4Tz8Np3Hs6Bd1";

function redactorOf(...values: string[]): Redactor {
  const r = new Redactor();
  r.add(values);
  return r;
}

Deno.test("redactCut() redacts a value before the cut that would split it", () => {
  const redactor = redactorOf(PW);
  // Cut after 19, 20, ... 23 characters of the password: none of them may be left.
  for (let left = 1; left < PW.length; left++) {
    const text = `${"n".repeat(119 - left)}${PW} tail`;
    const out = redactCut(text, 120, { redactor });
    // No two neighbouring characters of PW are both lower-case letters.
    assert.ok(!/[A-Z0-9]/.test(out), `${left}: ${out}`);
  }
});

Deno.test("redactCut() cuts as before when nothing is held", () => {
  const redactor = new Redactor();
  assert.equal(redactCut("short", 10, { redactor }), "short");
  assert.equal(redactCut("exactly10!", 10, { redactor }), "exactly10!");
  assert.equal(redactCut("eleven chars", 10, { redactor }), "eleven ch…");
});

Deno.test("redactCut() rewrites after redacting: a newline escape cannot split a value", () => {
  const oneLine = (t: string) => t.replace(/\n/g, "\\n");
  const text = `log ${PW.slice(0, 5)}\n${PW.slice(5, 10)}`;
  const short = redactorOf(PW.slice(0, 10));
  assert.equal(redactCut(text, 500, { redactor: short, rewrite: oneLine }), `log ${REDACTED}`);
  // Rewritten first, the escape's "n" would sit between the halves and hide the value.
  assert.equal(short.redact(oneLine(text)), oneLine(text));
});

Deno.test("redactCut() reads a giant string only as far as the cut can matter", () => {
  /** Remembers the longest text it was asked to redact. */
  class Spy extends Redactor {
    longest = 0;
    override redact(text: string): string {
      this.longest = Math.max(this.longest, text.length);
      return super.redact(text);
    }
  }
  const redactor = new Spy();
  redactor.add(PW);
  const giant = `${PW} ${"x".repeat(5_000_000)}`;
  const out = redactCut(giant, 120, { redactor });
  assert.equal(redactor.longest, 120 * 4 + CUT_READ_MARGIN);
  assert.equal(out.length, 120);
  assert.ok(out.startsWith(`${REDACTED} xxx`) && out.endsWith("…"));
  // A value straddling the bound is read whole: the bound has a margin past max * 4.
  const edge = `${"y".repeat(120 * 4 + CUT_READ_MARGIN - 12)}${PW}`;
  assert.equal(redactCut(edge, 1_000, { redactor }), `${"y".repeat(120 * 4 + 244)}${REDACTED}`);
});

Deno.test("redactClip() collapses whitespace after redacting, then cuts", () => {
  const redactor = redactorOf(PW);
  const spaced = [...PW].join("   \n ");
  assert.equal(redactClip(`  Name:\t${spaced}  `, 120, redactor), `Name: ${REDACTED}`);
  assert.equal(redactClip("  a   b  ", 120, new Redactor()), "a b");
  assert.equal(redactClip("x".repeat(200), 120, new Redactor()), `${"x".repeat(119)}…`);
});
