import assert from "node:assert/strict";
import { FakeHost, targetInfo } from "../../tests/helpers/fake_target.ts";
import type { TrackedTarget } from "../../cdp/mod.ts";
import { CdpSession } from "../../cdp/session.ts";
import { type HostRefusal, RefusedHosts } from "./refused_hosts.ts";

function fakeTarget(host: FakeHost, type: string): { target: TrackedTarget; session: CdpSession } {
  const info = targetInfo(type, `target-${type}`, "https://portal.test/");
  const session = new CdpSession(host, `session-${type}`, info);
  return { target: { session, info, seq: 1 }, session };
}

const blockedUrls = (host: FakeHost) =>
  host.calls.filter((c) => c.method === "Network.setBlockedURLs").map((c) =>
    (c.params as { urlPatterns: { urlPattern: string }[] }).urlPatterns.map((p) => p.urlPattern)
  );

Deno.test("RefusedHosts hands every page target the tunnels the policy refused, and forgets them when the rules change", async () => {
  const host = new FakeHost();
  const r = new RefusedHosts(() => {});
  const page = fakeTarget(host, "page");
  await r.install(page.target);
  assert.deepEqual(blockedUrls(host), [], "nothing learned: nothing sent");
  r.learn("Upload.Example", 443, "ORIGIN_NOT_ALLOWED", 1);
  r.learn("ws.example", 8080, "ORIGIN_NOT_ALLOWED", 1);
  r.learn("ws.example", 8080, "ORIGIN_NOT_ALLOWED", 1);
  assert.deepEqual(blockedUrls(host), [
    ["https://upload.example/*", "wss://upload.example/*", "ws://upload.example:443/*"],
    [
      "https://upload.example/*",
      "wss://upload.example/*",
      "ws://upload.example:443/*",
      "https://ws.example:8080/*",
      "wss://ws.example:8080/*",
      "ws://ws.example:8080/*",
    ],
  ]);
  // A target that comes later gets the list before it runs; other types get nothing.
  await r.install(fakeTarget(host, "iframe").target);
  await r.install(fakeTarget(host, "service_worker").target);
  assert.equal(blockedUrls(host).length, 3);
  assert.equal(host.calls.at(-1)!.sessionId, "session-iframe");
  // A target that cannot take the list still runs: the proxy refuses those tunnels anyway.
  host.failing.add("Network.setBlockedURLs");
  await r.install(fakeTarget(host, "worker").target);
  host.failing.clear();
  assert.equal(blockedUrls(host).length, 4);
  // Hosts a pattern could not spell plainly are never learned.
  r.learn("[::1]", 443, "X", 1);
  r.learn("a*b.example", 443, "X", 1);
  assert.equal(blockedUrls(host).length, 4);
  // New domain rules: everything learned is forgotten, on every target.
  r.sync(1);
  assert.equal(blockedUrls(host).length, 4);
  r.sync(2);
  assert.deepEqual(blockedUrls(host).slice(-3), [[], [], []]);
});

Deno.test("RefusedHosts reports a request Chromium refused on a learned entry, with its reason", async () => {
  const host = new FakeHost();
  const heard: HostRefusal[] = [];
  const r = new RefusedHosts((b) => heard.push(b));
  const { target, session } = fakeTarget(host, "page");
  await r.install(target);
  r.learn("cdn.example", 443, "ORIGIN_NOT_ALLOWED", 0);
  const sent = (requestId: string, url: string) =>
    session.dispatch("Network.requestWillBeSent", {
      requestId,
      loaderId: "l",
      documentURL: "https://portal.test/",
      request: {
        url,
        method: "get",
        headers: {},
        initialPriority: "Low",
        referrerPolicy: "origin",
      },
      timestamp: 1,
      wallTime: 1,
      initiator: { type: "parser" },
      redirectHasExtraInfo: false,
      type: "Image",
    });
  sent("b1", "https://cdn.example/pixel.gif?id=1");
  sent("b2", "https://cdn.example/other.gif");
  sent("ok", "https://portal.test/fine.png");
  session.dispatch("Network.loadingFailed", {
    requestId: "b1",
    timestamp: 2,
    type: "Image",
    errorText: "",
    blockedReason: "inspector",
  });
  // Failed for another reason: not ours to report.
  session.dispatch("Network.loadingFailed", {
    requestId: "b2",
    timestamp: 2,
    type: "Image",
    errorText: "net::ERR_ABORTED",
  });
  assert.deepEqual(heard, [{
    method: "GET",
    url: "https://cdn.example/pixel.gif?id=1",
    reason: "ORIGIN_NOT_ALLOWED",
    requestId: "b1",
  }]);
});
