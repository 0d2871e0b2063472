import assert from "node:assert/strict";
import type { AuditEvent } from "../store/audit_row.ts";
import type { ProxyQuestion } from "../proxy/proxy_protocol.ts";
import type { EgressProxy, ProxyJudge } from "./egress_proxy.ts";
import { warmEgress } from "./warm_egress.ts";

/** A proxy stand-in that records the listener's judge and whether it was closed. */
function fakeProxy() {
  const seen: { judge?: ProxyJudge; closed: boolean } = { closed: false };
  const proxy = {
    authority: { spkiPin: "PIN" },
    listen(judge: ProxyJudge) {
      seen.judge = judge;
      return Promise.resolve({
        port: 30_007,
        [Symbol.dispose]: () => seen.closed = true,
      });
    },
  };
  return { proxy: proxy as unknown as EgressProxy, seen };
}

const question: ProxyQuestion = { type: "connect", host: "example.test", port: 443 };

Deno.test("warmEgress() refuses and audits every request until a session binds it, then asks that session's judge", async () => {
  const { proxy, seen } = fakeProxy();
  const rows: AuditEvent[] = [];
  const extras = await warmEgress(proxy, { append: (e) => void rows.push(e) });
  assert.ok(extras.args.includes("--proxy-server=http://127.0.0.1:30007"));
  assert.ok(extras.args.includes("--ignore-certificate-errors-spki-list=PIN"));
  assert.deepEqual(await seen.judge!.ask(question), {
    allow: false,
    reason: "BROWSER_UNCLAIMED",
    exact: false,
  });
  const http: ProxyQuestion = {
    type: "http",
    method: "POST",
    url: "https://tracker.test/collect?id=planted-query",
  };
  assert.equal((await seen.judge!.ask(http)).reason, "BROWSER_UNCLAIMED");
  assert.deepEqual(rows.map((r) => [r.source, r.decision, r.reason, r.method, r.session]), [
    ["proxy", "deny", "BROWSER_UNCLAIMED", "CONNECT", undefined],
    ["proxy", "deny", "BROWSER_UNCLAIMED", "POST", undefined],
  ]);
  assert.deepEqual(rows.map((r) => r.origin), ["https://example.test", http.url]);
  const asked: string[] = [];
  const session: ProxyJudge = {
    ask: (q) => {
      asked.push(q.type === "connect" ? q.host : "?");
      return Promise.resolve({ allow: true, reason: "OK", exact: false });
    },
    refused: (_q, reason) => asked.push(`refused ${reason}`),
  };
  assert.equal(extras.bind(session), true);
  assert.equal((await seen.judge!.ask(question)).allow, true);
  seen.judge!.refused(question, "DNS");
  assert.deepEqual(asked, ["example.test", "refused DNS"]);
  // A browser has one session: a second bind is refused and changes nothing.
  const other: ProxyJudge = {
    ask: () => Promise.resolve({ allow: true, reason: "OTHER", exact: false }),
    refused: () => {},
  };
  assert.equal(extras.bind(other), false);
  assert.equal((await seen.judge!.ask(question)).reason, "OK");
  extras.release();
  assert.equal(seen.closed, true);
});

Deno.test("warmEgress() refuses an unclaimed request even when its audit row cannot be written", async () => {
  const { proxy, seen } = fakeProxy();
  await warmEgress(proxy, {
    append() {
      throw new Error("disk full");
    },
  });
  assert.equal((await seen.judge!.ask(question)).allow, false);
});
