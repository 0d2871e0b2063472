import assert from "node:assert/strict";
import { seededRandom } from "../../tests/helpers/random.ts";
import { b64, concat, expectedForms, hex, utf8 } from "../eval/encodings.ts";
import { REDACTED, Redactor } from "./redactor.ts";
import { MIN_SECRET_LENGTH, secretForms } from "./secret_forms.ts";
import { PARTIAL_RUN_LENGTH } from "./skeleton.ts";

/** A value with every character class an encoder treats differently. */
const PLANTED = "p@ss w0rd/&<x>\"'é😀+~*";

function redactorOf(...values: string[]): Redactor {
  const r = new Redactor();
  r.add(values);
  return r;
}

Deno.test("Redactor.redact() replaces every form of a planted value", () => {
  const r = redactorOf(PLANTED);
  for (const form of secretForms(PLANTED)) {
    assert.equal(r.redact(`before ${form} after`), `before ${REDACTED} after`, form);
  }
  for (const [name, form] of Object.entries(expectedForms(PLANTED))) {
    assert.ok(!r.redact(`<p>${form}</p>`).includes(form), name);
  }
});

Deno.test("Redactor.redact() catches btoa('user:' + secret) in a Basic header", () => {
  const secret = "correct horse battery";
  const r = redactorOf(secret);
  const header = `Authorization: Basic ${btoa("user:" + secret)}`;
  const out = r.redact(header);
  // "user:" is five bytes: the value starts at offset 2 of a base64 group, and the one
  // character that mixes ":" with the value's first bits stays.
  assert.equal(out, `Authorization: Basic dXNlcjp${REDACTED}`);
  assert.equal(atob("dXNl"), "use");
});

Deno.test("Redactor.redact() matches hex in either case and encodings only as written", () => {
  const secret = "Secret/Key";
  const r = redactorOf(secret);
  const mixed = [...hex(utf8(secret))].map((c, i) => i % 2 ? c.toUpperCase() : c).join("");
  assert.equal(r.redact(`id=${mixed};`), `id=${REDACTED};`);
  assert.equal(r.redact(`q=Secret%2fKey`), `q=${REDACTED}`);
  assert.equal(r.redact(`&#X53;&#x65;&#x63;&#x72;&#x65;&#x74;&#x2f;&#x4B;&#x65;&#x79;`), REDACTED);
  const b = b64(utf8(secret));
  assert.equal(r.redact(b.toLowerCase()), b.toLowerCase(), "base64 is case-sensitive");
});

Deno.test("Redactor.redact() treats characters of values literally", () => {
  const r = redactorOf("a.b*c(d|e");
  assert.equal(r.redact("aXbbbbc(d|e"), "aXbbbbc(d|e");
  assert.equal(r.redact("x a.b*c(d|e y"), `x ${REDACTED} y`);
});

Deno.test("Redactor.redact() prefers the longest form at a position", () => {
  const secret = "pass/word+1";
  const r = redactorOf(secret);
  const std = b64(utf8(secret));
  assert.equal(r.redact(`[${std}]`), `[${REDACTED}]`);
  assert.equal(r.redact(`q=${encodeURIComponent(secret)}&x`), `q=${REDACTED}&x`);
});

Deno.test("Redactor.redact() merges overlapping values", () => {
  const r = redactorOf("hunter22", "r22xyz!");
  assert.equal(r.redact("a hunter22xyz! b"), `a ${REDACTED} b`);
  assert.equal(r.redact("hunter22 and r22xyz!"), `${REDACTED} and ${REDACTED}`);
});

Deno.test("Redactor.redact() returns the same string when empty or when nothing matches", () => {
  const text = "An ordinary page: 12345, &amp; %20 \\u0041 SGVsbG8= deadbeef";
  assert.equal(new Redactor().redact(text), text);
  const r = redactorOf("zq9-Kx7!vB", "another long value");
  assert.equal(r.redact(text), text);
  assert.equal(r.redact(""), "");
});

Deno.test("Redactor.add() is idempotent and takes a string as one value", () => {
  const r = new Redactor();
  assert.equal(r.empty, true);
  assert.equal(r.add("hunter22"), 1);
  assert.equal(r.add(["hunter22", "hunter22"]), 0);
  assert.equal(r.size, 1);
  assert.equal(r.has("hunter22"), true);
  assert.equal(r.has("h"), false);
  assert.equal(r.add(["abc", "", "😀😀😀"]), 0, "too short");
  assert.equal(r.size, 1);
  assert.equal(r.empty, false);
  assert.equal(r.redact("abc hunter22"), `abc ${REDACTED}`);
  // A value added after a redact() is found by the next one.
  r.add(new Set(["second-value"]));
  assert.equal(r.redact("second-value hunter22"), `${REDACTED} ${REDACTED}`);
});

const ALPHABET = [
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
  ..." !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
  "é",
  "ß",
  "中",
  "😀",
  "\n",
  "\t",
];

function randomValue(rand: () => number, min = MIN_SECRET_LENGTH, max = 24): string {
  const n = min + Math.floor(rand() * (max - min + 1));
  let s = "";
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

function randomBytes(rand: () => number, n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
}

Deno.test("Redactor.redact() leaves no form of random values in random text", () => {
  const rand = seededRandom(0x5eed);
  for (let round = 0; round < 150; round++) {
    const value = randomValue(rand);
    const other = randomValue(rand);
    const r = redactorOf(value, other);
    for (const form of secretForms(value)) {
      const text = `${randomValue(rand, 0, 6)}${form}${randomValue(rand, 0, 6)}`;
      const out = r.redact(text);
      assert.ok(!out.includes(form), `round ${round}: ${JSON.stringify({ value, form, out })}`);
      assert.ok(out.includes(REDACTED));
    }
  }
});

Deno.test("Redactor.redact() keeps at most the mixed edge characters of embedded base64", () => {
  const rand = seededRandom(0xba5e64);
  for (let round = 0; round < 300; round++) {
    const value = randomValue(rand);
    const r = redactorOf(value);
    const bytes = utf8(value);
    const lead = Math.floor(rand() * 7);
    const trail = Math.floor(rand() * 5);
    const data = concat(randomBytes(rand, lead), bytes, randomBytes(rand, trail));
    for (const url of [false, true]) {
      let encoded = b64(data);
      if (url) encoded = encoded.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      const out = r.redact(encoded);
      const at = out.indexOf(REDACTED);
      const what = JSON.stringify({ round, value, lead, trail, encoded, out });
      assert.ok(at >= 0, what);
      // Before it: the lead bytes' characters, the one they share with the value at most.
      assert.ok(at <= Math.ceil((8 * lead) / 6), what);
      // After it: the trail bytes' characters (and padding) at most.
      const after = out.length - at - REDACTED.length;
      assert.ok(after <= encoded.length - Math.floor((8 * (lead + bytes.length)) / 6), what);
    }
  }
});

Deno.test("Redactor.redact() stays fast with many values on a large page", () => {
  const rand = seededRandom(42);
  const r = new Redactor();
  for (let i = 0; i < 100; i++) r.add(randomValue(rand, 10, 30));
  const page = "An ordinary line of page text, 1234567890 &amp; %2F \\u0041 QUJD\n".repeat(5_000);
  // Nothing of the page is taken for a value; bench/hot_paths_bench.ts times it.
  assert.equal(r.redact(page), page);
});

/** A 24-character password: only letters and digits, as a host name could hold it. */
const PW = "Qv7Rk2Lm9Xw4Tz8Np3Hs6Bd1";
const spaced = (s: string, sep: string) => [...s].join(sep);
const fullwidth = (s: string) =>
  [...s].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join("");

/** Input, secret, expected output: how a value reaches a page, and what must be left of it. */
const VECTORS: { name: string; secret: string; input: string; expected: string }[] = [
  {
    name: "lower-cased in a host name",
    secret: PW,
    input: `http://${PW.toLowerCase()}.localhost/`,
    expected: `http://${REDACTED}.localhost/`,
  },
  {
    name: "upper-cased",
    secret: PW,
    input: `NOTE ${PW.toUpperCase()}!`,
    expected: `NOTE ${REDACTED}!`,
  },
  {
    name: "letter-spaced",
    secret: PW,
    input: `pw: ${spaced(PW, " ")} end`,
    expected: `pw: ${REDACTED} end`,
  },
  {
    name: "dash-separated",
    secret: PW,
    input: `(${spaced(PW, "-")})`,
    expected: `(${REDACTED})`,
  },
  {
    name: "mixed punctuation between letters",
    secret: PW,
    input: `a ${[...PW].map((c, i) => c + "_.,:/|*~"[i % 8]).join("")} b`,
    expected: `a ${REDACTED}~ b`,
  },
  {
    name: "zero-width-space-joined",
    secret: PW,
    input: `x${spaced(PW, "\u200b")}y`,
    expected: `x${REDACTED}y`,
  },
  {
    name: "zero-width joiner, non-joiner, word joiner, BOM",
    secret: PW,
    input: [...PW].map((c, i) => c + ["\u200d", "\u200c", "\u2060", "\ufeff"][i % 4]).join(""),
    expected: `${REDACTED}\ufeff`,
  },
  {
    name: "bidi controls and soft hyphens",
    secret: PW,
    input: `<${[...PW].map((c, i) => c + ["\u202e", "\u2066", "\u00ad"][i % 3]).join("")}>`,
    expected: `<${REDACTED}\u00ad>`,
  },
  {
    name: "combining marks on every letter",
    secret: PW,
    input: `${[...PW].map((c) => c + "\u0332").join("")}.`,
    expected: `${REDACTED}\u0332.`,
  },
  { name: "fullwidth letters", secret: PW, input: `[${fullwidth(PW)}]`, expected: `[${REDACTED}]` },
  {
    name: "split across lines",
    secret: PW,
    input: `${PW.slice(0, 12)}\n${PW.slice(12)}\nnext`,
    expected: `${REDACTED}\nnext`,
  },
  {
    name: "reversed and lower-cased",
    secret: PW,
    input: `rev ${[...PW].reverse().join("").toLowerCase()}`,
    expected: `rev ${REDACTED}`,
  },
  {
    name: "a partial run of 8+ at the start of the text",
    secret: PW,
    input: `${PW.slice(0, 9)} and more`,
    expected: `${REDACTED} and more`,
  },
  {
    name: "a partial run in the middle",
    secret: PW,
    input: `one ${PW.slice(6, 16).toLowerCase()} two`,
    expected: `one ${REDACTED} two`,
  },
  {
    name: "a partial run at the end of the text",
    secret: PW,
    input: `ends with ${PW.slice(-11)}`,
    expected: `ends with ${REDACTED}`,
  },
  {
    name: "a cut leaving exactly 8 characters",
    secret: PW,
    input: `name: …${PW.slice(-8)}`,
    expected: `name: …${REDACTED}`,
  },
  {
    name: "a cut leaving exactly 8 characters, letter-spaced",
    secret: PW,
    input: `name: ${spaced(PW.slice(0, 8), " ")}…`,
    expected: `name: ${REDACTED}…`,
  },
  {
    name: "a cut leaving 7 characters (kept)",
    secret: PW,
    input: `name: ${PW.slice(0, 7)}…`,
    expected: `name: ${PW.slice(0, 7)}…`,
  },
  {
    name: "two 7-character pieces with a letter between (kept)",
    secret: PW,
    input: `${PW.slice(0, 7)}x${PW.slice(7, 14)}`,
    expected: `${PW.slice(0, 7)}x${PW.slice(7, 14)}`,
  },
  {
    name: "URL-encoded",
    secret: "p@ss w0rd/&<x>",
    input: `?next=${encodeURIComponent("p@ss w0rd/&<x>")}&y=1`,
    expected: `?next=${REDACTED}&y=1`,
  },
  {
    name: "base64",
    secret: PW,
    input: `token ${btoa(PW)} end`,
    expected: `token ${REDACTED} end`,
  },
  {
    name: "base64 of user:password",
    secret: "correct horse battery",
    input: `Basic ${btoa("user:correct horse battery")}`,
    expected: `Basic dXNlcjp${REDACTED}`,
  },
  {
    name: "a short value, upper-cased",
    secret: "hunter2",
    input: "pw HUNTER2 ok",
    expected: `pw ${REDACTED} ok`,
  },
  {
    name: "a short value, letter-spaced",
    secret: "hunter2",
    input: "h-u-n-t-e-r-2",
    expected: REDACTED,
  },
  {
    name: "a short value is found whole only",
    secret: "hunter2",
    input: "hunter is hunte",
    expected: "hunter is hunte",
  },
  {
    name: "a value whose letters are few: its punctuation is ignored",
    secret: "Pa$$-w0rd",
    input: "PA W0RD",
    expected: REDACTED,
  },
  {
    name: "a value of punctuation: found raw only",
    secret: "!@#$-ab",
    input: "AB !@#$-ab",
    expected: `AB ${REDACTED}`,
  },
  {
    name: "accents decomposed on the page",
    secret: "Pässwörd-Ünïcode-42",
    input: "x pa\u0308sswo\u0308rd u\u0308ni\u0308code 42 y",
    expected: `x ${REDACTED} y`,
  },
  {
    name: "ordinary text",
    secret: PW,
    input: "The quick brown fox jumps over the lazy dog 1234567890 QV7 rk2",
    expected: "The quick brown fox jumps over the lazy dog 1234567890 QV7 rk2",
  },
];

Deno.test("Redactor.redact() vectors: case, separators, invisibles, partial runs, encodings", () => {
  assert.equal(PARTIAL_RUN_LENGTH, 8);
  for (const v of VECTORS) {
    assert.equal(redactorOf(v.secret).redact(v.input), v.expected, v.name);
  }
});

/** Whether `text` holds a run of 8 of `secret`'s characters (folded, separators left out). */
function holdsRun(text: string, secret: string): boolean {
  const fold = (s: string) => s.normalize("NFKD").toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
  const t = fold(text);
  const s = fold(secret);
  for (let i = 0; i + 8 <= s.length; i++) if (t.includes(s.slice(i, i + 8))) return true;
  return false;
}

Deno.test("Redactor.redact() leaves no run of 8 of a value in random text around random cuts", () => {
  const rand = seededRandom(0xc075);
  const seps = [" ", "-", ".", "\u200b", "\u00ad", "\u202e", "", "", ""];
  for (let round = 0; round < 300; round++) {
    const value = randomValue(rand, 8, 30);
    const r = redactorOf(value);
    const from = Math.floor(rand() * value.length);
    const to = from + Math.floor(rand() * (value.length - from + 1));
    const sep = seps[Math.floor(rand() * seps.length)];
    const piece = [...value.slice(from, to)].map((c) => rand() < 0.5 ? c.toUpperCase() : c)
      .join(sep);
    const text = `${randomValue(rand, 0, 6)} ${piece} ${randomValue(rand, 0, 6)}`;
    const out = r.redact(text);
    assert.ok(!holdsRun(out, value), JSON.stringify({ round, value, text, out }));
  }
});

Deno.test("Redactor.redact() maps a run back over astral and expanding characters", () => {
  const r = redactorOf("😀ﬃx-Qv7Rk2Lm9X");
  assert.equal(r.redact("a 😀FFIX qv7rk2lm9x b"), `a 😀${REDACTED} b`);
  assert.equal(r.redact("ﬃxqv7rk2"), REDACTED);
});

Deno.test("Redactor.redact() runs stay fast on a large page with many values", () => {
  const rand = seededRandom(7);
  const r = new Redactor();
  for (let i = 0; i < 200; i++) r.add(randomValue(rand, 10, 30));
  const page = "Ordinary text, ÉCOLE 中文 &amp; spaced l e t t e r s\u200b and-dashes\n".repeat(
    5_000,
  );
  // bench/hot_paths_bench.ts times it; here, nothing of the page is taken for a value.
  assert.equal(r.redact(page), page);
});

Deno.test("Redactor.add() wholeOnly: a username is found whole, not by its pieces", () => {
  const r = new Redactor();
  r.add(["ada.lovelace@example.test"], { wholeOnly: true });
  assert.equal(r.redact("mail ada.lovelace@example.test now"), "mail [redacted] now");
  assert.equal(r.redact("ADA LOVELACE @ EXAMPLE.TEST"), "[redacted]");
  // Its domain alone is ordinary text on the pages that know the user.
  assert.equal(r.redact("see example.test/docs"), "see example.test/docs");
  // Added again without the option, the value is matched by its runs too.
  r.add(["ada.lovelace@example.test"]);
  assert.match(r.redact("see example.test/docs"), /^se.*\[redacted\]\/docs$/);
});
