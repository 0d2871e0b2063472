import assert from "node:assert/strict";
import { seededRandom } from "../../tests/helpers/random.ts";
import { MIN_SECRET_LENGTH, REDACTED, Redactor, secretForms } from "./redactor.ts";

/** A value with every character class an encoder treats differently. */
const PLANTED = "p@ss w0rd/&<x>\"'é😀+~*";

const utf8 = (s: string) => new TextEncoder().encode(s);

function b64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function redactorOf(...values: string[]): Redactor {
  const r = new Redactor();
  r.add(values);
  return r;
}

/** Every form of `value`, computed here with the platform's own encoders where it has one. */
function expectedForms(value: string): Record<string, string> {
  const bytes = utf8(value);
  const std = b64(bytes);
  const uri = encodeURIComponent(value);
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  const lower = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  const cps = [...value].map((c) => c.codePointAt(0)!);
  return {
    raw: value,
    reversed: [...value].reverse().join(""),
    encodeURIComponent: uri,
    encodeURIComponentLower: lower(uri),
    formUrlencoded: form,
    formUrlencodedLower: lower(form),
    encodeURI: encodeURI(value),
    htmlNamed: value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;"),
    htmlDecimalAll: cps.map((c) => `&#${c};`).join(""),
    htmlHexAll: cps.map((c) => `&#x${c.toString(16).toUpperCase()};`).join(""),
    htmlDecimalSpecial: [...value].map((c) => `&<>"'`.includes(c) ? `&#${c.codePointAt(0)};` : c)
      .join(""),
    base64: std,
    base64Unpadded: std.replace(/=+$/, ""),
    base64Url: std.replace(/\+/g, "-").replace(/\//g, "_"),
    base64UrlUnpadded: std.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
    hexLower: hex(bytes),
    hexUpper: hex(bytes).toUpperCase(),
    json: JSON.stringify(value).slice(1, -1),
  };
}

Deno.test("secretForms() includes every encoding of a planted value", () => {
  const forms = new Set(secretForms(PLANTED));
  for (const [name, form] of Object.entries(expectedForms(PLANTED))) {
    assert.ok(forms.has(form), `${name} missing: ${form}`);
  }
  assert.deepEqual([...forms], [...forms].sort((a, b) => b.length - a.length), "longest first");
});

Deno.test("secretForms() is empty below MIN_SECRET_LENGTH characters", () => {
  assert.equal(MIN_SECRET_LENGTH, 4);
  assert.deepEqual(secretForms(""), []);
  assert.deepEqual(secretForms("abc"), []);
  // Three characters, even when they take more UTF-16 units.
  assert.deepEqual(secretForms("😀😀😀"), []);
  assert.ok(secretForms("abcd").includes("abcd"));
  assert.ok(secretForms("abcd").every((f) => f.length >= MIN_SECRET_LENGTH));
});

Deno.test("secretForms() includes base64 at every alignment", () => {
  const value = "hunter2-sekret";
  const forms = secretForms(value);
  for (let lead = 0; lead < 6; lead++) {
    for (let trail = 0; trail < 4; trail++) {
      const encoded = b64(concat(utf8("x".repeat(lead)), utf8(value), utf8("y".repeat(trail))));
      assert.ok(
        forms.some((f) => encoded.includes(f)),
        `no form found in base64 with ${lead} bytes before and ${trail} after: ${encoded}`,
      );
    }
  }
});

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

Deno.test("Redactor.redact() matches hex in either case and nothing else case-folded", () => {
  const secret = "Secret/Key";
  const r = redactorOf(secret);
  const mixed = [...hex(utf8(secret))].map((c, i) => i % 2 ? c.toUpperCase() : c).join("");
  assert.equal(r.redact(`id=${mixed};`), `id=${REDACTED};`);
  assert.equal(r.redact(`q=Secret%2fKey`), `q=${REDACTED}`);
  assert.equal(r.redact(`&#X53;&#x65;&#x63;&#x72;&#x65;&#x74;&#x2f;&#x4B;&#x65;&#x79;`), REDACTED);
  assert.equal(r.redact("SECRET/KEY secret/key"), "SECRET/KEY secret/key");
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
  r.redact(page);
  const t0 = performance.now();
  assert.equal(r.redact(page), page);
  const ms = performance.now() - t0;
  // Generous: a regression to quadratic or per-value scanning takes seconds.
  assert.ok(ms < 1_000, `${ms} ms for ${page.length} chars`);
});
