import assert from "node:assert/strict";
import { baseFacts, FRESH_SESSION } from "../policy/fact_builders.ts";
import {
  type HeldWrite,
  isFormSubmission,
  matchesSubmission,
  runtimeHold,
  type RuntimeSubmission,
} from "./write_hold.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const URLENC = "application/x-www-form-urlencoded";
const facts = baseFacts("request", FRESH_SESSION);

function write(extra: Partial<HeldWrite> = {}, body = "user=alice&pass=s3cret-pass"): HeldWrite {
  return {
    method: "POST",
    url: "https://login.test/session",
    contentType: URLENC,
    body: enc(body),
    dest: "document",
    mode: "navigate",
    ...extra,
  };
}

const expected: RuntimeSubmission = {
  method: "POST",
  url: "https://login.test/session",
  entries: [["user", "alice"], ["pass", "s3cret-pass"]],
};

Deno.test("matchesSubmission() admits only the filled form's own request, entry for entry", () => {
  const vectors: [string, HeldWrite, boolean][] = [
    ["the form's own submission", write(), true],
    ["entries in another order", write({}, "pass=s3cret-pass&user=alice"), true],
    ["plain http without Sec-Fetch", write({ dest: undefined, mode: undefined }), true],
    ["an entry a formdata listener added", write({}, "user=alice&pass=s3cret-pass&x=1"), false],
    [
      "the password copied into a second entry",
      write({}, "user=alice&pass=s3cret-pass&pass=s3cret-pass"),
      false,
    ],
    ["a changed value", write({}, "user=mallory&pass=s3cret-pass"), false],
    ["an entry removed", write({}, "user=alice"), false],
    ["another path", write({ url: "https://login.test/steal" }), false],
    [
      "a query added to the action",
      write({ url: "https://login.test/session?p=s3cret-pass" }),
      false,
    ],
    ["another origin", write({ url: "https://evil.test/session" }), false],
    ["another method", write({ method: "PUT" }), false],
    ["a fetch", write({ dest: "empty", mode: "cors" }), false],
    ["an iframe navigation", write({ dest: "iframe" }), false],
    ["JSON", write({ contentType: "application/json" }, '{"user":"alice"}'), false],
    ["multipart", write({ contentType: "multipart/form-data; boundary=x" }), false],
    ["invalid UTF-8", { ...write(), body: new Uint8Array([0xff, 0xfe]) }, false],
  ];
  for (const [what, w, ok] of vectors) assert.equal(matchesSubmission(w, expected), ok, what);
});

Deno.test("matchesSubmission() reads a GET form's entries from the query", () => {
  const get: RuntimeSubmission = { ...expected, method: "GET", url: "https://login.test/s?old=1" };
  const ok = write({ method: "GET", url: "https://login.test/s?user=alice&pass=s3cret-pass" });
  assert.equal(matchesSubmission({ ...ok, body: new Uint8Array() }, get), true);
  const extra = write({
    method: "GET",
    url: "https://login.test/s?user=alice&pass=s3cret-pass&x=1",
  });
  assert.equal(matchesSubmission(extra, get), false);
});

function held(submission: RuntimeSubmission | null) {
  const hold = runtimeHold();
  hold.expect(submission);
  return hold;
}

Deno.test("runtimeHold() lets the submission through once, to a named origin, and reports the first refusal", async () => {
  const hold = held({ ...expected, namedOrigins: ["https://login.test"] });
  assert.equal(hold.strict, true);
  assert.equal(
    (await hold.judge(write({}, "user=alice&pass=s3cret-pass&leak=1"), facts)).reason,
    "LOGIN_WRITE_MISMATCH",
  );
  assert.equal((await hold.judge(write(), facts)).reason, "LOGIN_SUBMIT");
  assert.equal(hold.admitted, true);
  // Replayed: the second identical request is not the login's.
  assert.equal((await hold.judge(write(), facts)).reason, "LOGIN_WRITE_MISMATCH");
  assert.equal(hold.refused, "LOGIN_WRITE_MISMATCH");
  const unnamed = held({ ...expected, namedOrigins: ["https://other.test"] });
  assert.equal((await unnamed.judge(write(), facts)).reason, "LOGIN_ORIGIN_NOT_NAMED");
  assert.equal(unnamed.refused, "LOGIN_ORIGIN_NOT_NAMED");
  // No names: the request must still be exact.
  assert.equal((await held(expected).judge(write(), facts)).decision, "allow");
  // A form whose submission cannot be known exactly writes nothing.
  assert.equal((await held(null).judge(write(), facts)).reason, "LOGIN_WRITE_MISMATCH");
});

Deno.test("runtimeHold() admits nothing before it is told what to expect (values being typed)", async () => {
  const hold = runtimeHold();
  assert.equal((await hold.judge(write(), facts)).reason, "LOGIN_WRITE_MISMATCH");
  hold.expect(expected);
  assert.equal((await hold.judge(write(), facts)).reason, "LOGIN_SUBMIT");
});

Deno.test("runtimeHold().settled() resolves at the first judged navigation, or after its time", async () => {
  const hold = held(expected);
  const t0 = Date.now();
  assert.equal(await hold.settled(30), false, "nothing judged: false, after its time");
  assert.ok(Date.now() - t0 >= 25);
  const waiting = hold.settled(10_000);
  await hold.judge(write(), facts);
  assert.equal(await waiting, true);
  assert.equal(await hold.settled(10_000), true); // already judged: at once
});

Deno.test("runtimeHold().settled() keeps waiting past a copy sent before the form's own submission", async () => {
  // A beacon, a fetch or a frame copy the page sends first is refused, but the form's own
  // navigation may still be on its way: the login must not close its hold on the copy.
  const copies: [string, Partial<HeldWrite>][] = [
    ["a beacon", { dest: "empty", mode: "no-cors", url: "https://login.test/beacon" }],
    ["a fetch", { dest: "empty", mode: "cors", url: "https://login.test/other" }],
    ["a frame copy", { dest: "iframe", mode: "navigate" }],
  ];
  for (const [name, copy] of copies) {
    const hold = held(expected);
    assert.equal((await hold.judge(write(copy), facts)).reason, "LOGIN_WRITE_MISMATCH", name);
    let woke = false;
    const waiting = hold.settled(10_000).then(() => (woke = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(woke, false, `${name} ended the wait`);
    assert.equal((await hold.judge(write(), facts)).reason, "LOGIN_SUBMIT", name);
    await waiting;
  }
  // Without Sec-Fetch the proxy cannot tell a copy from the navigation: any write settles.
  const plain = held(expected);
  await plain.judge(
    write({ dest: undefined, mode: undefined, url: "https://login.test/x" }),
    facts,
  );
  await plain.settled(10_000);
});

Deno.test("isFormSubmission() is a top-level navigation to the form's own action in a form encoding", () => {
  const form = { method: "POST", origin: "https://login.test", path: "/session" };
  assert.equal(isFormSubmission(write(), form), true);
  assert.equal(
    isFormSubmission(write({ url: "https://login.test/session?to=mallory" }), form),
    true,
  );
  assert.equal(isFormSubmission(write({ dest: "iframe" }), form), false);
  assert.equal(isFormSubmission(write({ dest: "empty", mode: "cors" }), form), false);
  assert.equal(isFormSubmission(write({ url: "https://login.test/other" }), form), false);
  assert.equal(isFormSubmission(write({ contentType: "application/json" }), form), false);
  assert.equal(isFormSubmission(write(), undefined), false);
  assert.equal(isFormSubmission(write({ dest: undefined, mode: undefined }), form), true);
});

Deno.test('runtimeHold({ purpose: "capture" }) names its verdicts for the capture', async () => {
  const hold = runtimeHold({ purpose: "capture" });
  hold.expect({ ...expected, namedOrigins: ["https://login.test"] });
  const refused = await hold.judge(write({}, "user=alice&pass=other"), facts);
  assert.deepEqual([refused.reason, refused.module], ["CAPTURE_WRITE_MISMATCH", "capture"]);
  const allowed = await hold.judge(write(), facts);
  assert.deepEqual([allowed.reason, allowed.module], ["CAPTURE_SUBMIT", "capture"]);
  const unnamed = runtimeHold({ purpose: "capture" });
  unnamed.expect({ ...expected, namedOrigins: ["https://vendor.test"] });
  assert.equal((await unnamed.judge(write(), facts)).reason, "CAPTURE_ORIGIN_NOT_NAMED");
});

Deno.test("matchesSubmission() admits the runtime's own fetch only as sent: its URL, no body, no navigation", () => {
  const conversion: RuntimeSubmission = {
    method: "POST",
    url: "https://vendor.test/api/v3/app-manifests/c0de/conversions",
    entries: [],
    request: "fetch",
  };
  const fetchOf = (extra: Partial<HeldWrite> = {}, body = ""): HeldWrite =>
    write({ url: conversion.url, dest: "empty", mode: "cors", contentType: null, ...extra }, body);
  const vectors: [string, HeldWrite, boolean][] = [
    ["the fetch itself", fetchOf(), true],
    ["without Sec-Fetch (plain http)", fetchOf({ dest: undefined, mode: undefined }), true],
    ["a body added", fetchOf({}, "x=1"), false],
    ["another code", fetchOf({ url: conversion.url.replace("c0de", "c0df") }), false],
    ["a query added", fetchOf({ url: `${conversion.url}?to=evil` }), false],
    ["a navigation to the same URL", fetchOf({ dest: "document", mode: "navigate" }), false],
    ["a GET", fetchOf({ method: "GET" }), false],
  ];
  for (const [name, w, want] of vectors) {
    assert.equal(matchesSubmission(w, conversion), want, name);
  }
});
