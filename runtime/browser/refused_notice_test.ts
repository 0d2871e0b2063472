import assert from "node:assert/strict";
import { REFUSED_LISTED, RefusedRequests } from "./refused_notice.ts";
import { Notices } from "./notices.ts";
import { Redactor } from "../redact/mod.ts";

Deno.test("RefusedRequests.take() groups by reason, counts repeats and leaves GET implicit", () => {
  const b = new RefusedRequests();
  assert.equal(b.take(), undefined);
  for (let i = 0; i < 3; i++) {
    b.add({ method: "GET", origin: "https://ads.test", reason: "ORIGIN_NOT_ALLOWED" });
  }
  b.add({ method: "POST", origin: "http://127.0.0.1:8081", reason: "READ_ONLY_WRITE" });
  b.add({ method: "GET", origin: "http://127.0.0.3:9", reason: "ORIGIN_NOT_ALLOWED" });
  assert.equal(
    b.take(),
    "blocked 5 requests since the last snapshot: ORIGIN_NOT_ALLOWED: https://ads.test x3, " +
      "http://127.0.0.3:9; READ_ONLY_WRITE: POST http://127.0.0.1:8081",
  );
  assert.equal(b.take(), undefined, "taken once");
});

Deno.test("RefusedRequests.take() lists a bounded number of entries", () => {
  const b = new RefusedRequests();
  for (let i = 0; i < REFUSED_LISTED + 5; i++) {
    b.add({ method: "GET", origin: `https://t${i}.test`, reason: "ORIGIN_NOT_ALLOWED" });
  }
  const notice = b.take()!;
  assert.match(notice, /^blocked 13 requests since the last snapshot: /);
  assert.match(notice, /; \+5 more$/);
  assert.equal(notice.split("https://").length - 1, REFUSED_LISTED);
});

/** A planted password (24 letters and digits) and a redactor that holds it. */
const PLANTED_PW = "Zk4Wq9Rt2Xm7Pv3Lh8Ns5Jd6";
function plantedRedactor(): Redactor {
  const r = new Redactor();
  r.add(PLANTED_PW);
  return r;
}

Deno.test("RefusedRequests.add() redacts an origin holding the password, lower-cased by the browser", () => {
  const b = new RefusedRequests(plantedRedactor());
  b.add({ method: "GET", origin: `http://${PLANTED_PW.toLowerCase()}.test`, reason: "R" });
  b.add({ method: "GET", origin: `http://${PLANTED_PW.toUpperCase()}.test`, reason: "R" });
  assert.equal(
    b.take(),
    "blocked 2 requests since the last snapshot: R: http://[redacted].test x2",
  );
});

Deno.test("Notices.push() stores a line redacted; drop() still finds it", () => {
  const n = new Notices(plantedRedactor());
  const line = `page said ${[...PLANTED_PW].join("\u200b")}`;
  n.push(line);
  n.push("kept");
  assert.deepEqual(n.take(), ["page said [redacted]", "kept"]);
  n.push(line);
  n.drop(line);
  assert.deepEqual(n.take(), []);
});
