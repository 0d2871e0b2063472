import assert from "node:assert/strict";
import { ChunkedScanner, responseFraming } from "./http_framing.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("responseFraming() reads no body, a length, chunked or until close", () => {
  assert.deepEqual(responseFraming("HEAD", 200, [["Content-Length", "5"]]), { kind: "none" });
  for (const status of [103, 204, 304]) {
    assert.deepEqual(responseFraming("GET", status, []), { kind: "none" });
  }
  assert.deepEqual(responseFraming("GET", 200, [["content-length", "12"]]), {
    kind: "length",
    length: 12,
  });
  // Repeated identical values are one length (RFC 9112 §6.3).
  assert.deepEqual(responseFraming("GET", 200, [["Content-Length", "3, 3"]]), {
    kind: "length",
    length: 3,
  });
  assert.deepEqual(responseFraming("GET", 200, [["Transfer-Encoding", "gzip, chunked"]]), {
    kind: "chunked",
  });
  assert.deepEqual(responseFraming("GET", 200, [["Transfer-Encoding", "gzip"]]), {
    kind: "close",
  });
  assert.deepEqual(responseFraming("GET", 200, []), { kind: "close" });
});

Deno.test("responseFraming() refuses the ambiguous lengths smuggling lives on", () => {
  const cases: [string, string][][] = [
    [["Content-Length", "5"], ["Transfer-Encoding", "chunked"]],
    [["Content-Length", "5"], ["Content-Length", "6"]],
    [["Content-Length", "5, 6"]],
    [["Content-Length", "-1"]],
    [["Content-Length", "0x10"]],
    [["Content-Length", ""]],
    [["Content-Length", "1".repeat(16)]],
  ];
  for (const headers of cases) {
    assert.equal(responseFraming("GET", 200, headers), "invalid", JSON.stringify(headers));
  }
});

const BODY =
  "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n";

Deno.test("ChunkedScanner finds the end of a chunked body however it is split", () => {
  const whole = bytes(BODY + "NEXT");
  const end = BODY.length;
  for (let cut = 0; cut <= whole.length; cut++) {
    const s = new ChunkedScanner();
    const a = s.feed(whole.subarray(0, cut));
    if (a >= 0) {
      assert.equal(a, end, `cut ${cut}`);
      continue;
    }
    assert.equal(s.failed, false, `cut ${cut}`);
    const b = s.feed(whole.subarray(cut));
    assert.equal(b + cut, end, `cut ${cut}`);
    assert.ok(s.done);
  }
  // One byte at a time.
  const s = new ChunkedScanner();
  let at = -1;
  for (let i = 0; i < whole.length && at < 0; i++) {
    const r = s.feed(whole.subarray(i, i + 1));
    if (r >= 0) at = i + r;
  }
  assert.equal(at, end);
});

Deno.test("ChunkedScanner fails on what is not a chunked body", () => {
  const bad = [
    "zz\r\n",
    "\r\n",
    "4\r\nWikiX\r\n",
    "4\nWiki",
    "4\r\nWiki\r\n0\r\n\rX",
    "F".repeat(14) + "\r\n",
    `1;${"e".repeat(5000)}\r\n`,
  ];
  for (const text of bad) {
    const s = new ChunkedScanner();
    assert.equal(s.feed(bytes(text)), -1, JSON.stringify(text));
    assert.equal(s.failed, true, JSON.stringify(text));
  }
  // A body that simply goes on is not a failure.
  const open = new ChunkedScanner();
  assert.equal(open.feed(bytes("ffff\r\nabc")), -1);
  assert.equal(open.failed, false);
});
