import assert from "node:assert/strict";
import { generateSecret, ScureBase32Plugin, verify } from "otplib";
import { OmotaiError } from "../errors.ts";
import {
  parseTotpSeed,
  type TotpAlgorithm,
  totpCode,
  TotpError,
  type TotpErrorCode,
  totpStepRemainingMs,
} from "./totp.ts";

interface Rfc6238 {
  digits: number;
  period: number;
  seeds: Record<TotpAlgorithm, string>;
  vectors: { time: number; codes: Record<TotpAlgorithm, string> }[];
}

const RFC: Rfc6238 = JSON.parse(
  await Deno.readTextFile(new URL("./testdata/rfc6238.json", import.meta.url)),
);

// otplib's own encoder, so the module's base32 decoder is checked against another one.
const base32 = new ScureBase32Plugin();
const ascii = (s: string) => new TextEncoder().encode(s);
const rfcBase32 = (alg: TotpAlgorithm) => base32.encode(ascii(RFC.seeds[alg]), { padding: false });

const failsWith = (code: TotpErrorCode, ...hidden: string[]) => (err: unknown) => {
  assert.ok(err instanceof TotpError, `expected a TotpError, got ${err}`);
  assert.equal(err.code, code);
  for (const text of [err.message, String(err), err.stack ?? "", JSON.stringify(err)]) {
    for (const h of hidden) assert.ok(!text.includes(h), `error text shows ${h}: ${text}`);
  }
  return true;
};

for (const alg of ["SHA1", "SHA256", "SHA512"] as const) {
  Deno.test(`totpCode() matches RFC 6238 ${alg} vectors`, async () => {
    const uri = `otpauth://totp/RFC%206238:${alg}?secret=${rfcBase32(alg)}&algorithm=${alg}` +
      `&digits=${RFC.digits}&period=${RFC.period}`;
    using seed = parseTotpSeed(uri);
    assert.deepEqual([seed.algorithm, seed.digits, seed.period], [alg, 8, 30]);
    for (const v of RFC.vectors) {
      assert.equal(await totpCode(seed, v.time * 1000), v.codes[alg], `time ${v.time}`);
      // Any millisecond inside the same second gives the same code.
      assert.equal(await totpCode(seed, v.time * 1000 + 999), v.codes[alg], `time ${v.time}.999`);
    }
  });
}

Deno.test("totpCode() of a bare base32 seed is SHA1, 6 digits, 30 s (the RFC codes' last 6 digits)", async () => {
  using seed = parseTotpSeed(rfcBase32("SHA1"));
  assert.deepEqual([seed.algorithm, seed.digits, seed.period], ["SHA1", 6, 30]);
  for (const v of RFC.vectors) {
    assert.equal(await totpCode(seed, v.time * 1000), v.codes.SHA1.slice(-6), `time ${v.time}`);
  }
});

Deno.test("totpCode() gives codes otplib's verify() accepts for a fresh seed", async () => {
  for (let i = 0; i < 20; i++) {
    const secret = generateSecret();
    using seed = parseTotpSeed(secret);
    const now = Date.now();
    const token = await totpCode(seed, now);
    assert.match(token, /^\d{6}$/);
    const result = await verify({ secret, token, epoch: Math.floor(now / 1000) });
    assert.equal(result.valid, true);
  }
});

Deno.test("parseTotpSeed() tolerates spaces, lowercase, padding and surrounding whitespace", async () => {
  const canonical = rfcBase32("SHA1");
  const grouped = canonical.toLowerCase().match(/.{1,4}/g)!.join(" ");
  using reference = parseTotpSeed(canonical);
  const want = await totpCode(reference, 1111111109_000);
  for (
    const text of [
      grouped,
      `\n  ${grouped}\t\n`,
      `${canonical}`,
      "GEZDGNBVGY3TQOJQ\nGEZDGNBVGY3TQOJQ",
    ]
  ) {
    using seed = parseTotpSeed(text);
    assert.equal(await totpCode(seed, 1111111109_000), want, JSON.stringify(text));
  }
  // 10 bytes -> 16 characters, no padding; 11 bytes -> 18 characters plus "======".
  using padded = parseTotpSeed(base32.encode(ascii("12345678901"), { padding: true }));
  assert.equal(padded.digits, 6);
});

Deno.test("parseTotpSeed() reads otpauth://totp parameters, case-insensitively, ignoring the rest", async () => {
  const secret = rfcBase32("SHA256");
  using seed = parseTotpSeed(
    `OTPAUTH://TOTP/ACME%20Co:alice%40example.com?issuer=ACME%20Co&secret=${secret.toLowerCase()}` +
      `&algorithm=sha256&digits=8&period=60&image=https%3A%2F%2Fexample.com%2Flogo.png`,
  );
  assert.deepEqual([seed.algorithm, seed.digits, seed.period], ["SHA256", 8, 60]);
  // With a 60 s period the step at 119 s is 1, the step RFC time 59 has with 30 s.
  assert.equal(await totpCode(seed, 119_000), RFC.vectors[0].codes.SHA256);
  assert.equal(totpStepRemainingMs(seed, 119_000), 1_000);

  using defaults = parseTotpSeed(`otpauth://totp/?secret=${encodeURIComponent(secret + "====")}`);
  assert.deepEqual([defaults.algorithm, defaults.digits, defaults.period], ["SHA1", 6, 30]);
  using noLabel = parseTotpSeed(`otpauth://totp?secret=${secret}`);
  assert.equal(noLabel.period, 30);
});

Deno.test("parseTotpSeed() rejects HOTP and unsupported parameters with TOTP_UNSUPPORTED, never echoing the seed", () => {
  const secret = rfcBase32("SHA1");
  for (
    const text of [
      `otpauth://hotp/ACME:alice?secret=${secret}&counter=3`,
      `otpauth://HOTP/ACME:alice?secret=${secret}`,
      `otpauth://yaotp/ACME:alice?secret=${secret}`,
      `otpauth://totp/ACME:alice?secret=${secret}&algorithm=MD5`,
      `otpauth://totp/ACME:alice?secret=${secret}&algorithm=${secret}`,
      `otpauth://totp/ACME:alice?secret=${secret}&digits=7`,
      `otpauth://totp/ACME:alice?secret=${secret}&digits=10`,
      `otpauth://totp/ACME:alice?secret=${secret}&period=86400`,
      `otpauth-migration://offline?data=${secret}`,
    ]
  ) {
    assert.throws(() => parseTotpSeed(text), failsWith("TOTP_UNSUPPORTED", secret, "alice"), text);
  }
});

Deno.test("parseTotpSeed() rejects malformed input with TOTP_SEED_INVALID, never echoing the seed", () => {
  const secret = rfcBase32("SHA1");
  const cases: [string, string][] = [
    ["", ""],
    ["   \n", ""],
    ["JBSWY3DPEHPK3PX!", "JBSWY3DPEHPK3PX"],
    ["GEZDGNBVGY3TQOJQ1", "GEZDGNBVGY3TQOJQ"],
    [secret + "A", secret],
    [secret + "ABC", secret],
    [secret + "ABCDEF", secret],
    ["GEZD=GNBVGY3TQOJQ", "GNBVGY3TQOJQ"],
    ["JBSWY3DP", "JBSWY3DP"],
    ["GEZDGNBVGY3TQOJ", "GEZDGNBVGY3TQOJ"],
    ["A".repeat(208), "AAAAAAAA"],
    ["123456", "123456"],
    [`https://example.com/?secret=${secret}`, secret],
    [`otpauth://totp/ACME:alice`, "alice"],
    [`otpauth://totp/ACME:alice?secret=`, "alice"],
    [`otpauth://totp/ACME:alice?secret=${secret}&secret=${secret}`, secret],
    [`otpauth://totp/ACME:alice?secret=${secret}x`, secret],
    [`otpauth://totp/ACME:alice?secret=${secret}&digits=six`, secret],
    [`otpauth://totp/ACME:alice?secret=${secret}&period=0`, secret],
    [`otpauth://totp/ACME:alice?secret=${secret}&period=-30`, secret],
    [`otpauth://totp/ACME:alice?secret=${secret}&period=1.5`, secret],
    [`otpauth://totp/ACME:alice?secret=${secret}&digits=6&digits=8`, secret],
    [`otpauth://[${secret}/x?secret=${secret}`, secret],
  ];
  for (const [text, hidden] of cases) {
    const hide = hidden === "" ? [] : [hidden, hidden.toLowerCase()];
    assert.throws(() => parseTotpSeed(text), failsWith("TOTP_SEED_INVALID", ...hide), text);
  }
  assert.throws(() => parseTotpSeed(42 as unknown as string), failsWith("TOTP_SEED_INVALID"));
});

Deno.test("parseTotpSeed() returns a seed that shows no secret through toString, JSON or inspection", () => {
  const secret = rfcBase32("SHA1");
  const seed = parseTotpSeed(`otpauth://totp/ACME:alice?secret=${secret}&digits=8`);
  const hex = Array.from(ascii(RFC.seeds.SHA1), (b) => b.toString(16).padStart(2, "0")).join("");
  const views = [
    String(seed),
    `${seed}`,
    JSON.stringify(seed),
    JSON.stringify({ seed }),
    Deno.inspect(seed, { showHidden: true, depth: 10 }),
    Deno.inspect({ nested: [seed] }, { showHidden: true }),
    JSON.stringify({ ...seed }),
    JSON.stringify(Object.getOwnPropertyNames(seed)),
    Deno.inspect(structuredClone({ ...seed }), { showHidden: true }),
  ];
  for (const view of views) {
    for (const bad of [secret, secret.toLowerCase(), RFC.seeds.SHA1, hex, "GEZDGNBV"]) {
      assert.ok(!view.includes(bad), `a view shows the secret: ${view}`);
    }
  }
  assert.equal(JSON.stringify(seed), JSON.stringify("[TotpSeed SHA1 8 digits 30s, secret hidden]"));
  assert.deepEqual(Object.keys(seed).sort(), ["algorithm", "digits", "period"]);
  assert.ok(Object.isFrozen(seed));
});

Deno.test("totpCode() refuses a disposed or forged seed with TOTP_SEED_INVALID", async () => {
  const seed = parseTotpSeed(rfcBase32("SHA1"));
  assert.match(await totpCode(seed, 59_000), /^\d{6}$/);
  seed[Symbol.dispose]();
  await assert.rejects(totpCode(seed, 59_000), failsWith("TOTP_SEED_INVALID"));
  const forged = { ...seed, [Symbol.dispose]() {} };
  await assert.rejects(totpCode(forged, 59_000), failsWith("TOTP_SEED_INVALID"));
  assert.throws(() => totpStepRemainingMs(forged, 59_000), failsWith("TOTP_SEED_INVALID"));
});

Deno.test("totpCode() refuses a time that is not finite and non-negative with TOTP_TIME_INVALID", async () => {
  using seed = parseTotpSeed(rfcBase32("SHA1"));
  for (const at of [-1, NaN, Infinity, -Infinity]) {
    await assert.rejects(totpCode(seed, at), failsWith("TOTP_TIME_INVALID"), String(at));
  }
  assert.throws(() => totpStepRemainingMs(seed, NaN), failsWith("TOTP_TIME_INVALID"));
});

Deno.test("totpStepRemainingMs() counts down to the next step", () => {
  using seed = parseTotpSeed(rfcBase32("SHA1"));
  assert.equal(totpStepRemainingMs(seed, 0), 30_000);
  assert.equal(totpStepRemainingMs(seed, 59_000), 1_000);
  assert.equal(totpStepRemainingMs(seed, 59_999), 1);
  assert.equal(totpStepRemainingMs(seed, 60_000), 30_000);
});

Deno.test("TotpError is an OmotaiError with a stable code and no cause", () => {
  try {
    parseTotpSeed("otpauth://hotp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
    assert.fail("expected a throw");
  } catch (err) {
    assert.ok(err instanceof TotpError);
    assert.ok(err instanceof OmotaiError);
    assert.equal(err.name, "TotpError");
    assert.equal(err.code, "TOTP_UNSUPPORTED");
    assert.equal(err.cause, undefined);
  }
});
