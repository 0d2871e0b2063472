import assert from "node:assert/strict";
import { FakeHost, targetInfo } from "../../tests/helpers/fake_target.ts";
import { testBoundary } from "../../tests/helpers/boundary.ts";
import type { Protocol, TrackedTarget } from "../../cdp/mod.ts";
import { CdpSession } from "../../cdp/session.ts";
import type { Facts } from "../policy/facts.ts";
import type { SessionCounters } from "../policy/fact_builders.ts";
import type { RefusedRequest } from "../browser/refused_notice.ts";
import { type GuardPause, requestFacts, RequestGuard } from "./request_guard.ts";

const COUNTERS: SessionCounters = {
  tainted: false,
  actionsUsed: 2,
  secondsElapsed: 4.5,
  confirmationsUsed: 0,
};

const FRAME: Facts["frame"] = { top: true, origin: "https://portal.test" };

function paused(
  url: string,
  options: {
    method?: string;
    resourceType?: Protocol.Network.ResourceType;
    redirectedRequestId?: string;
    requestId?: string;
    frameId?: string;
  } = {},
): Protocol.Fetch.RequestPausedEvent {
  return {
    requestId: options.requestId ?? "req-1",
    request: {
      url,
      method: options.method ?? "GET",
      headers: {},
      initialPriority: "High",
      referrerPolicy: "strict-origin-when-cross-origin",
    },
    frameId: options.frameId ?? "frame-1",
    resourceType: options.resourceType ?? "Document",
    ...(options.redirectedRequestId ? { redirectedRequestId: options.redirectedRequestId } : {}),
  };
}

Deno.test("requestFacts() marks a redirect by redirectedRequestId, whatever the type", () => {
  for (
    const [resourceType, method] of <[Protocol.Network.ResourceType, string][]> [
      ["Document", "GET"],
      ["Document", "POST"],
      ["XHR", "GET"],
      ["Image", "GET"],
    ]
  ) {
    const f = requestFacts(
      paused("https://portal.test/next", { resourceType, method, redirectedRequestId: "req-0" }),
      FRAME,
      COUNTERS,
    );
    assert.equal(f.initiator, "redirect", `${resourceType} ${method}`);
  }
});

Deno.test("requestFacts() marks scripted resource types as script", () => {
  const scripted: Protocol.Network.ResourceType[] = [
    "XHR",
    "Fetch",
    "EventSource",
    "WebSocket",
    "Ping",
    "CSPViolationReport",
  ];
  for (const resourceType of scripted) {
    for (const method of ["GET", "POST"]) {
      const f = requestFacts(
        paused("https://portal.test/api", { resourceType, method }),
        FRAME,
        COUNTERS,
      );
      assert.equal(f.initiator, "script", `${resourceType} ${method}`);
    }
  }
});

Deno.test("requestFacts() marks a non-GET Document as form and anything else as page", () => {
  const initiator = (resourceType: Protocol.Network.ResourceType, method: string) =>
    requestFacts(paused("https://portal.test/x", { resourceType, method }), FRAME, COUNTERS)
      .initiator;
  assert.equal(initiator("Document", "POST"), "form");
  assert.equal(initiator("Document", "post"), "form", "the method is compared upper-cased");
  assert.equal(initiator("Document", "PUT"), "form");
  assert.equal(initiator("Document", "GET"), "page");
  assert.equal(initiator("Document", "get"), "page");
  for (const t of <Protocol.Network.ResourceType[]> ["Image", "Script", "Stylesheet", "Other"]) {
    assert.equal(initiator(t, "POST"), "page", t);
  }
});

Deno.test("requestFacts() upper-cases the method, lower-cases the type and canonicalizes the target", () => {
  const f = requestFacts(
    paused("https://Portal.TEST:443/A/./b/../C%2Fd?token=secret#frag", {
      method: "patch",
      resourceType: "CSPViolationReport",
    }),
    { top: false, origin: "https://other.test" },
    COUNTERS,
  );
  assert.deepEqual(f, {
    abi: 1,
    kind: "request",
    target: { scheme: "https", origin: "https://portal.test", path: "/a/c/d" },
    method: "PATCH",
    resource_type: "cspviolationreport",
    initiator: "script",
    frame: { top: false, origin: "https://other.test" },
    form: null,
    element: null,
    session: { tainted: false, actions_used: 2, seconds_elapsed: 4.5, confirmations_used: 0 },
  });
  const data = requestFacts(paused("data:text/plain,hi"), FRAME, COUNTERS);
  assert.deepEqual(data.target, { scheme: "data", origin: null, path: null });
});

function fakeTarget(type: string, url = "https://portal.test/"): {
  target: TrackedTarget;
  host: FakeHost;
  session: CdpSession;
} {
  const host = new FakeHost();
  const info = targetInfo(type, `target-${type}`, url);
  const session = new CdpSession(host, `session-${type}`, info);
  return { target: { session, info, seq: 1 }, host, session };
}

async function guardWith(pause?: GuardPause) {
  const built = await testBoundary({
    allowed: ["https://portal.test"],
    config: { read_only: true },
    domains: false,
  });
  const { boundary, audit } = built;
  const refused: RefusedRequest[] = [];
  const tickets: string[] = [];
  const guard = new RequestGuard({
    boundary,
    session: () => ({ id: "s-4", agent: "agent-y" }),
    counters: () => COUNTERS,
    onRefused: (r) => refused.push(r),
    onAllowed: (method, url) => tickets.push(`${method} ${url}`),
    pause,
  });
  return {
    guard,
    audit,
    refused,
    tickets,
    [Symbol.asyncDispose]: () => built[Symbol.asyncDispose](),
  };
}

/** Emits a paused request on the target's session and waits for the guard's answer. */
async function pause(
  host: FakeHost,
  session: CdpSession,
  e: Protocol.Fetch.RequestPausedEvent,
): Promise<{ method: string; params: unknown }> {
  const before = host.calls.length;
  const answered = host.next("Fetch.continueRequest", "Fetch.failRequest");
  session.dispatch("Fetch.requestPaused", e);
  await answered;
  const answers = host.calls.slice(before);
  assert.equal(answers.length, 1, JSON.stringify(answers));
  return answers[0];
}

Deno.test("RequestGuard.install() leaves targets of other types alone", async () => {
  await using g = await guardWith();
  for (const type of ["worker", "browser", "tab", "other", "webview", "auction_worklet"]) {
    const { target, host, session } = fakeTarget(type);
    await g.guard.install(target);
    session.dispatch("Fetch.requestPaused", paused("https://evil.test/"));
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(host.calls, [], type);
  }
  assert.deepEqual(g.refused, []);
  assert.equal(g.audit.rows().length, 0);
});

Deno.test("RequestGuard.install() enables Fetch for every request at stage Request on guarded targets", async () => {
  await using g = await guardWith();
  for (const type of ["page", "iframe", "shared_worker", "service_worker"]) {
    const { target, host } = fakeTarget(type);
    const installed = g.guard.install(target);
    // Sent before install() returns: before the tracker resumes the target.
    assert.deepEqual(host.calls, [{
      sessionId: `session-${type}`,
      method: "Fetch.enable",
      params: { patterns: [{ urlPattern: "*", requestStage: "Request" }] },
    }], type);
    await installed;
  }
});

Deno.test("RequestGuard.install() pauses documents only, or nothing with proxy", async () => {
  await using docs = await guardWith("documents");
  const { target, host } = fakeTarget("page");
  await docs.guard.install(target);
  assert.deepEqual(host.calls.map((c) => c.params), [{
    patterns: [{ urlPattern: "*", resourceType: "Document", requestStage: "Request" }],
  }]);
  await using none = await guardWith("proxy");
  for (const type of ["page", "iframe", "shared_worker", "service_worker"]) {
    const { target, host } = fakeTarget(type);
    await none.guard.install(target);
    // Any Fetch.enable would cost every request Chromium's interception price.
    assert.deepEqual(host.calls, [], type);
  }
});

Deno.test("RequestGuard.install() continues an allowed request and audits it", async () => {
  await using g = await guardWith();
  const { target, host, session } = fakeTarget("page");
  await g.guard.install(target);
  const answer = await pause(
    host,
    session,
    paused("https://portal.test/home", { requestId: "ok-1", frameId: "target-page" }),
  );
  assert.deepEqual(answer, {
    sessionId: "session-page",
    method: "Fetch.continueRequest",
    params: { requestId: "ok-1" },
  });
  assert.deepEqual(g.refused, []);
  const rows = g.audit.rows().map((r) => [r.source, r.session, r.agent, r.decision, r.origin]);
  assert.deepEqual(rows, [["request", "s-4", "agent-y", "allow", "https://portal.test"]]);
  // The proxy's ticket: the full URL, for it to match, told before the request goes.
  assert.deepEqual(g.tickets, ["GET https://portal.test/home"]);
});

Deno.test("RequestGuard.install() fails a denied request with BlockedByClient and reports its origin only", async () => {
  await using g = await guardWith();
  const { target, host, session } = fakeTarget("iframe");
  await g.guard.install(target);
  const denied = [
    paused("https://evil.test/steal?token=secret", { requestId: "d-1", resourceType: "XHR" }),
    paused("https://portal.test/transfer", { requestId: "d-2", method: "post" }),
    paused("data:text/plain,secret", { requestId: "d-3", resourceType: "Image" }),
  ];
  for (const e of denied) {
    const answer = await pause(host, session, e);
    assert.deepEqual(answer, {
      sessionId: "session-iframe",
      method: "Fetch.failRequest",
      params: { requestId: e.requestId, errorReason: "BlockedByClient" },
    });
  }
  assert.deepEqual(g.refused, [
    { method: "GET", origin: "https://evil.test", reason: "ORIGIN_NOT_ALLOWED" },
    { method: "POST", origin: "https://portal.test", reason: "READ_ONLY_WRITE" },
    { method: "GET", origin: "data:", reason: "SCHEME_NOT_ALLOWED" },
  ]);
  assert.ok(!JSON.stringify(g.refused).includes("secret"));
  assert.ok(!host.methods().includes("Fetch.continueRequest"));
  assert.deepEqual(g.audit.rows().map((r) => r.decision), ["deny", "deny", "deny"]);
  assert.deepEqual(g.tickets, [], "a refused request gets no ticket");
});

Deno.test("RequestGuard.install() swallows a failed answer to a request (target gone)", async () => {
  await using g = await guardWith();
  const { target, host, session } = fakeTarget("service_worker", "https://portal.test/sw.js");
  await g.guard.install(target);
  host.failing.add("Fetch.continueRequest");
  host.failing.add("Fetch.failRequest");
  await pause(host, session, paused("https://portal.test/a", { requestId: "g-1" }));
  await pause(host, session, paused("https://evil.test/b", { requestId: "g-2" }));
  // Let any unhandled rejection surface inside this test.
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(host.methods(), ["Fetch.enable", "Fetch.continueRequest", "Fetch.failRequest"]);
  assert.deepEqual(g.refused.map((b) => b.origin), ["https://evil.test"]);
});
