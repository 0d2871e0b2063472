import assert from "node:assert/strict";
import { escapeText, showText, type TextFlag } from "./shown_text.ts";

Deno.test("escapeText() escape vectors", () => {
  const vectors: [string, string, TextFlag[]][] = [
    ["plain text", "plain text", []],
    ["a\\b", "a\\\\b", []],
    ["line\nnext\r\tend", "line\\nnext\\r\\tend", []],
    ["\u202Eevil", "\\u{202E}evil", ["bidi"]],
    ["\u2066\u2069\u200E\u200F\u061C", "\\u{2066}\\u{2069}\\u{200E}\\u{200F}\\u{061C}", ["bidi"]],
    ["zero\u200Bwidth", "zero\\u{200B}width", ["invisible"]],
    ["soft\u00ADhyphen\uFEFF", "soft\\u{00AD}hyphen\\u{FEFF}", ["invisible"]],
    ["\u115F\u1160\u3164\uFFA0\u2800", "\\u{115F}\\u{1160}\\u{3164}\\u{FFA0}\\u{2800}", [
      "invisible",
    ]],
    ["a\uFE0F\u{E0100}", "a\\u{FE0F}\\u{E0100}", ["invisible"]],
    ["\u{E0041}\u{E007F}", "\\u{E0041}\\u{E007F}", ["invisible"]],
    ["nul\u0000bel\u0007del\u007F", "nul\\u{0000}bel\\u{0007}del\\u{007F}", ["control"]],
    ["\u0085\u2028\u2029", "\\u{0085}\\u{2028}\\u{2029}", ["control"]],
    ["lone \uD800", "lone \\u{D800}", ["invisible"]],
    ["\u202E\u200B\u0001", "\\u{202E}\\u{200B}\\u{0001}", ["bidi", "invisible", "control"]],
    ["café 😀 עברית", "café 😀 עברית", []],
  ];
  for (const [raw, text, flags] of vectors) {
    assert.deepEqual(escapeText(raw), { text, flags }, JSON.stringify(raw));
  }
});

Deno.test("escapeText() a forged escape stays a literal", () => {
  const forged = escapeText("pay \\u{202E}Bob");
  assert.equal(forged.text, "pay \\\\u{202E}Bob");
  assert.deepEqual(forged.flags, []);
  assert.notEqual(forged.text, escapeText("pay \u202EBob").text);
});

Deno.test("showText() redacts the original before escaping and counts code points", () => {
  const seen: string[] = [];
  // A redactor that, like the runtime's, looks through a zero-width space inside a secret.
  const redact = (s: string) => {
    seen.push(s);
    return s.replace(/s\u200B?3cret/g, "[redacted]");
  };
  const shown = showText("x s\u200B3cret 😀\u202E", redact);
  assert.deepEqual(seen, ["x s\u200B3cret 😀\u202E"]);
  assert.deepEqual(shown, { text: "x [redacted] 😀\\u{202E}", length: 15, flags: ["bidi"] });
});
