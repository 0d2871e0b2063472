import assert from "node:assert/strict";
import type { RefusedRequest } from "../browser/refused_notice.ts";
import type { RequestContext } from "../gate/audit_rows.ts";
import type { Facts } from "../policy/facts.ts";
import { FRESH_SESSION } from "../policy/fact_builders.ts";
import { EgressLedger } from "./egress_ledger.ts";
import { proxyFacts } from "./proxy_judge.ts";

function ledgerWithLogs() {
  const heard: string[] = [];
  const rows: string[] = [];
  const ledger = new EgressLedger({
    boundary: {
      domainGeneration: 7,
      recordRefusal: (f: Facts, ctx: RequestContext, reason: string) =>
        rows.push(`${ctx.source} ${ctx.session} ${f.method} ${f.target?.origin ?? null} ${reason}`),
    },
    session: () => ({ id: "s-1", agent: "a" }),
    notice: {
      add: (r: RefusedRequest) => heard.push(`notice ${r.method} ${r.origin} ${r.reason}`),
    },
    network: {
      refused: (r) => heard.push(`network ${r.networkId} ${r.reason}`),
      requestRefused: (m, u, reason) => heard.push(`request ${m} ${u} ${reason}`),
      tunnelRefused: (a, reason) => heard.push(`tunnel ${a} ${reason}`),
    },
    hosts: { learn: (h, p, reason, g) => heard.push(`learn ${h}:${p} ${reason} ${g}`) },
  });
  return { ledger, heard, rows };
}

Deno.test("EgressLedger audits only what the boundary did not, and learns only settled tunnels", () => {
  const { ledger, heard, rows } = ledgerWithLogs();
  const connect = { type: "connect" as const, host: "cdn.test", port: 443 };
  const tunnelFacts = proxyFacts(connect, FRESH_SESSION)[0];
  ledger.outcome({
    via: "proxy",
    question: connect,
    facts: tunnelFacts,
    reason: "ORIGIN_NOT_ALLOWED",
    audited: true,
  });
  ledger.outcome({
    via: "proxy",
    question: connect,
    facts: tunnelFacts,
    reason: "GATE_ERROR",
    audited: true,
  });
  ledger.outcome({
    via: "proxy",
    question: connect,
    facts: tunnelFacts,
    reason: "DNS_FAILED",
    audited: false,
  });
  const http = { type: "http" as const, method: "POST", url: "https://x.test/p?q=1" };
  ledger.outcome({
    via: "proxy",
    question: http,
    facts: proxyFacts(http, FRESH_SESSION)[0],
    reason: "CHUNKED_REFUSED",
    audited: false,
  });
  ledger.outcome({
    via: "guard",
    refused: {
      method: "GET",
      origin: "https://y.test",
      reason: "ORIGIN_NOT_ALLOWED",
      networkId: "n1",
    },
  });
  const learned = { type: "http" as const, method: "GET", url: "https://cdn.test/a.png" };
  ledger.outcome({
    via: "learned",
    method: "GET",
    facts: proxyFacts(learned, FRESH_SESSION)[0],
    reason: "ORIGIN_NOT_ALLOWED",
    networkId: "n2",
  });
  assert.deepEqual(rows, [
    "proxy s-1 CONNECT https://cdn.test DNS_FAILED",
    "proxy s-1 POST https://x.test CHUNKED_REFUSED",
    "proxy s-1 GET https://cdn.test ORIGIN_NOT_ALLOWED",
  ]);
  assert.deepEqual(heard, [
    "tunnel cdn.test:443 ORIGIN_NOT_ALLOWED",
    "learn cdn.test:443 ORIGIN_NOT_ALLOWED 7",
    "tunnel cdn.test:443 GATE_ERROR",
    "tunnel cdn.test:443 DNS_FAILED",
    "request POST https://x.test/p?q=1 CHUNKED_REFUSED",
    "notice POST https://x.test CHUNKED_REFUSED",
    "notice GET https://y.test ORIGIN_NOT_ALLOWED",
    "network n1 ORIGIN_NOT_ALLOWED",
    "notice GET https://cdn.test ORIGIN_NOT_ALLOWED",
    "network n2 ORIGIN_NOT_ALLOWED",
  ]);
});
