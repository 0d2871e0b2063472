import assert from "node:assert/strict";
import { testBoundary } from "../../tests/helpers/boundary.ts";
import type { RefusedRequest } from "../browser/refused_notice.ts";
import { FRESH_SESSION, type SessionCounters } from "../policy/fact_builders.ts";
import { EgressLedger } from "./egress_ledger.ts";
import { GuardTickets } from "./guard_tickets.ts";
import { proxyFacts, proxyJudge } from "./proxy_judge.ts";

const COUNTERS: SessionCounters = {
  tainted: true,
  actionsUsed: 3,
  secondsElapsed: 1.23456,
  confirmationsUsed: 1,
};

const ALLOWED = ["https://portal.test", "http://127.0.0.1:8081"];

/** A real boundary (baseline or allow-all module) over an in-memory database. */
async function judgeWith(allowAll: boolean) {
  const built = await testBoundary({
    allowed: ALLOWED,
    config: { read_only: true },
    module: allowAll ? "allow-all" : "baseline",
  });
  const { boundary, audit, domains } = built;
  const refused: RefusedRequest[] = [];
  const tunnels: [string, string][] = [];
  const settled: string[] = [];
  const session = () => ({ id: "s-9", agent: "agent-x" });
  const ledger = new EgressLedger({
    boundary,
    session,
    notice: { add: (r) => refused.push(r) },
    network: {
      refused: () => {},
      requestRefused: () => {},
      tunnelRefused: (authority, reason) => tunnels.push([authority, reason]),
    },
    hosts: { learn: (host, port, reason) => settled.push(`${host}:${port} ${reason}`) },
  });
  const judge = proxyJudge({ boundary, session, counters: () => COUNTERS, ledger });
  return {
    judge,
    boundary,
    refused,
    tunnels,
    settled,
    audit,
    domains,
    /** Audit rows of requests (not lifecycle events) as compact tuples. */
    requestRows: () =>
      audit.rows().filter((r) => r.kind === "request").map((r) => [
        r.source,
        r.session,
        r.agent,
        r.decision,
        r.reason,
        r.origin,
        r.method,
      ]),
    [Symbol.asyncDispose]: () => built[Symbol.asyncDispose](),
  };
}

Deno.test("proxyFacts() makes a CONNECT to port 443 stand for https only", () => {
  const facts = proxyFacts({ type: "connect", host: "Portal.TEST", port: 443 }, COUNTERS);
  assert.deepEqual(facts, [{
    abi: 1,
    kind: "request",
    target: { scheme: "https", origin: "https://portal.test", path: null },
    method: "CONNECT",
    resource_type: "tunnel",
    initiator: "page",
    frame: { top: false, origin: null },
    form: null,
    element: null,
    session: { tainted: true, actions_used: 3, seconds_elapsed: 1.235, confirmations_used: 1 },
  }]);
});

Deno.test("proxyFacts() makes a CONNECT to another port stand for https and http", () => {
  const targets = (port: number) =>
    proxyFacts({ type: "connect", host: "portal.test", port }, COUNTERS).map((f) => {
      assert.equal(f.method, "CONNECT");
      assert.equal(f.resource_type, "tunnel");
      return f.target;
    });
  assert.deepEqual(targets(8443), [
    { scheme: "https", origin: "https://portal.test:8443", path: null },
    { scheme: "http", origin: "http://portal.test:8443", path: null },
  ]);
  // Port 80 is http's default: that alternative's origin drops it.
  assert.deepEqual(targets(80).map((t) => t?.origin), [
    "https://portal.test:80",
    "http://portal.test",
  ]);
});

Deno.test("proxyFacts() brackets IPv6 hosts of a CONNECT", () => {
  const origins = (host: string, port: number) =>
    proxyFacts({ type: "connect", host, port }, COUNTERS).map((f) => f.target?.origin);
  assert.deepEqual(origins("::1", 8443), ["https://[::1]:8443", "http://[::1]:8443"]);
  assert.deepEqual(origins("[::1]", 8443), ["https://[::1]:8443", "http://[::1]:8443"]);
  assert.deepEqual(origins("2001:db8::1", 443), ["https://[2001:db8::1]"]);
  assert.deepEqual(origins("127.0.0.1", 443), ["https://127.0.0.1"]);
});

Deno.test("proxyFacts() gives a malformed question method UNKNOWN and no target", () => {
  const facts = proxyFacts({ type: "malformed" }, COUNTERS);
  assert.equal(facts.length, 1);
  assert.deepEqual(
    [facts[0].kind, facts[0].method, facts[0].target, facts[0].resource_type],
    ["request", "UNKNOWN", null, "proxy"],
  );
});

Deno.test("proxyFacts() carries a plain-HTTP question's method and URL", () => {
  const facts = proxyFacts(
    { type: "http", method: "post", url: "http://Portal.test:80/Docs//Report%20A?secret=1" },
    COUNTERS,
  );
  assert.equal(facts.length, 1);
  assert.equal(facts[0].method, "POST");
  assert.equal(facts[0].resource_type, "proxy");
  assert.deepEqual(facts[0].target, {
    scheme: "http",
    origin: "http://portal.test",
    path: "/docs/report a",
  });
  assert.ok(!JSON.stringify(facts).includes("secret"), "the query is not a fact");
  const junk = proxyFacts({ type: "http", method: "GET", url: "not a url" }, COUNTERS);
  assert.equal(junk[0].target, null);
});

Deno.test("proxyJudge().ask() allows only on an allow and audits every answer", async () => {
  await using j = await judgeWith(false);
  const ask = async (q: Parameters<typeof j.judge.ask>[0]) => {
    const a = await j.judge.ask(q);
    return [a.allow, a.reason, a.exact];
  };
  assert.deepEqual(await ask({ type: "connect", host: "portal.test", port: 443 }), [
    true,
    "OK",
    true,
  ]);
  assert.deepEqual(await ask({ type: "connect", host: "evil.test", port: 443 }), [
    false,
    "ORIGIN_NOT_ALLOWED",
    false,
  ]);
  // The tunnel's http alternative is the listed one: it wins.
  assert.deepEqual(await ask({ type: "connect", host: "127.0.0.1", port: 8081 }), [
    true,
    "OK",
    true,
  ]);
  // A listed origin, but a write under read_only: refused although `exact`.
  assert.deepEqual(await ask({ type: "http", method: "POST", url: "http://127.0.0.1:8081/up" }), [
    false,
    "READ_ONLY_WRITE",
    true,
  ]);
  assert.deepEqual(await ask({ type: "malformed" }), [false, "TARGET_UNKNOWN", false]);
  assert.deepEqual(j.requestRows(), [
    ["proxy", "s-9", "agent-x", "allow", "OK", "https://portal.test", "CONNECT"],
    ["proxy", "s-9", "agent-x", "deny", "ORIGIN_NOT_ALLOWED", "https://evil.test", "CONNECT"],
    ["proxy", "s-9", "agent-x", "allow", "OK", "http://127.0.0.1:8081", "CONNECT"],
    ["proxy", "s-9", "agent-x", "deny", "READ_ONLY_WRITE", "http://127.0.0.1:8081", "POST"],
    ["proxy", "s-9", "agent-x", "deny", "TARGET_UNKNOWN", null, "UNKNOWN"],
  ]);
  // Refused requests are the model's to hear of, by origin; refused tunnels go to the
  // network log by host and port (it tells the page's from Chromium's own); allows and
  // unreadable questions to neither.
  assert.deepEqual(j.refused, [
    { method: "POST", origin: "http://127.0.0.1:8081", reason: "READ_ONLY_WRITE" },
  ]);
  assert.deepEqual(j.tunnels, [["evil.test:443", "ORIGIN_NOT_ALLOWED"]]);
  // The policy's own refusal of a tunnel: the browser may refuse it from then on.
  assert.deepEqual(j.settled, ["evil.test:443 ORIGIN_NOT_ALLOWED"]);
});

Deno.test("proxyJudge().ask() reports exact only for exactly listed origins", async () => {
  await using j = await judgeWith(true);
  const ask = (host: string, port = 443) => j.judge.ask({ type: "connect", host, port });
  // The module allows anything; only listed origins are exact (may resolve privately).
  const open = await ask("public.test");
  assert.deepEqual([open.allow, open.exact], [true, false]);
  assert.equal((await ask("portal.test")).exact, true);
  assert.equal((await ask("portal.test", 8443)).exact, false, "another port is another origin");
  assert.equal((await ask("sub.portal.test")).exact, false);
  // A literal private address needs an exact listing even when the module allows.
  const priv = await ask("10.0.0.5");
  assert.deepEqual([priv.allow, priv.reason, priv.exact], [false, "PRIVATE_ADDRESS", false]);
  // An operator allow makes an origin exact; an operator deny takes exactness and the allow.
  await j.domains.add("https://public.test", "allow");
  assert.deepEqual([(await ask("public.test")).allow, (await ask("public.test")).exact], [
    true,
    true,
  ]);
  await j.domains.add("https://portal.test", "deny");
  const denied = await ask("portal.test");
  assert.deepEqual([denied.allow, denied.reason, denied.exact], [false, "DOMAIN_DENIED", false]);
});

Deno.test("proxyJudge().refused() writes a deny audit row for the question", async () => {
  await using j = await judgeWith(false);
  j.judge.refused({ type: "connect", host: "portal.test", port: 8443 }, "UPSTREAM_UNREACHABLE");
  j.judge.refused(
    { type: "http", method: "put", url: "https://portal.test/a?token=abc" },
    "CHUNKED_REFUSED",
  );
  j.judge.refused({ type: "malformed" }, "BAD_REQUEST");
  assert.deepEqual(j.requestRows(), [
    // A tunnel's refusal is recorded under its first (https) alternative.
    [
      "proxy",
      "s-9",
      "agent-x",
      "deny",
      "UPSTREAM_UNREACHABLE",
      "https://portal.test:8443",
      "CONNECT",
    ],
    ["proxy", "s-9", "agent-x", "deny", "CHUNKED_REFUSED", "https://portal.test", "PUT"],
    ["proxy", "s-9", "agent-x", "deny", "BAD_REQUEST", null, "UNKNOWN"],
  ]);
  assert.ok(j.audit.rows().every((r) => r.kind !== "request" || r.module === "runtime"));
  assert.ok(!JSON.stringify(j.audit.rows()).includes("token"));
  assert.deepEqual(j.refused.map((b) => [b.method, b.origin, b.reason]), [
    ["PUT", "https://portal.test", "CHUNKED_REFUSED"],
  ]);
  assert.deepEqual(j.tunnels, [["portal.test:8443", "UPSTREAM_UNREACHABLE"]]);
  assert.deepEqual(j.settled, [], "what failed after an allow is never learned");
});

Deno.test("proxyFacts() takes a request's resource type from its Sec-Fetch-Dest", () => {
  const [image] = proxyFacts({
    type: "http",
    method: "GET",
    url: "https://portal.test/a.png",
    secFetch: { site: "same-origin", mode: "no-cors", dest: "image" },
  }, FRESH_SESSION);
  assert.equal(image.resource_type, "image");
  const [bare] = proxyFacts(
    { type: "http", method: "GET", url: "https://portal.test/" },
    FRESH_SESSION,
  );
  assert.equal(bare.resource_type, "proxy");
});

Deno.test("proxyJudge().ask() lets a read the request guard allowed through once on its ticket, unaudited again", async () => {
  await using j = await judgeWith(false);
  const tickets = new GuardTickets();
  const judge = proxyJudge({
    boundary: j.boundary,
    session: () => ({ id: "s-9", agent: "agent-x" }),
    counters: () => COUNTERS,
    tickets,
  });
  const url = "http://127.0.0.1:8081/img.png?v=1";
  tickets.issue("GET", url);
  const first = await judge.ask({ type: "http", method: "GET", url });
  assert.deepEqual([first.allow, first.reason, first.exact], [true, "OK", true]);
  assert.deepEqual(j.requestRows(), [], "the guard's row stands for it");
  // Taken: the same request again is judged (and audited) like any other.
  await judge.ask({ type: "http", method: "GET", url });
  // A ticket never carries an upgrade, nor a write (none is issued for one).
  tickets.issue("GET", url);
  await judge.ask({ type: "http", method: "GET", url, upgrade: "websocket" });
  tickets.issue("POST", url);
  const post = await judge.ask({ type: "http", method: "POST", url });
  assert.equal(post.reason, "READ_ONLY_WRITE");
  assert.deepEqual(j.requestRows().map((r) => r[6]), ["GET", "GET", "POST"]);
});
