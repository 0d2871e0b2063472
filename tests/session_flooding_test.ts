/**
 * Byte-rate caps per browser (issue 36, item 5): one runtime decodes every browser's CDP
 * events and held request bodies, so a page that keeps them coming (console messages just
 * under the 32 MiB cap, one 8 MiB write after another) is slowed to its browser's rate, then
 * ended with `SESSION_FLOODING`, audited; its next call starts a fresh browser, and another
 * session's calls go on answering meanwhile. A control shows the same page makes an
 * unmetered browser send far more than the cap allows. Every hostile page is bounded in count
 * and time: it stops by itself.
 *
 * The caps here are the policy's `limits`, set low: Chromium on a loaded 2-core runner makes a
 * 31 MiB console message in seconds, slower than the runtime's default event rate, which is
 * sized for faster hosts (docs/threat-model.md).
 *
 * @module
 */
import { busyMachine } from "./helpers/cpu_hogs.ts";
import assert from "node:assert/strict";
import { findBrowser, ProfileStore } from "../cdp/mod.ts";
import { BrowserSession } from "../runtime/browser/browser_session.ts";
import { allowAllGate } from "../runtime/gate/gate.ts";
import { log } from "../runtime/log.ts";
import { runTool, TOOLS } from "../runtime/tools/mod.ts";
import { eventually, startHarness, type TestClient } from "./helpers/harness.ts";
import { KEEP_BROWSING_PAUSE_MS } from "./helpers/steady_session.ts";
import { FLOOD_MS, LOG_CHARS, LOG_FLOOD_ROUTES, routeResponse } from "./fixtures/hostile_site.ts";

const MIB = 1024 * 1024;
/** Held bodies the write flood sends at most, each at the proxy's 8 MiB cap. */
const WRITES = 48;
const BODY_BYTES = 8 * MIB;

/**
 * The caps of these tests (the policy's `limits`): 1 MiB/s, 8 or 16 MiB at once, 2 s over. One
 * message of the log flood (32 MiB) is 24 s of debt at this rate: the flood is slowed from its
 * first message on, and 2 s of it show the slowing as well as more would, at less CPU.
 */
const LIMITS = `limits:
  cdp_bytes_per_sec: ${1 * MIB}
  cdp_burst_bytes: ${8 * MIB}
  held_body_bytes_per_sec: ${1 * MIB}
  held_body_burst_bytes: ${16 * MIB}
  flood_seconds: 2
`;

/**
 * The write test's: CDP's cap out of reach (a page's POST shows in its browser's network
 * events too, and this test is to see the proxy's meter end it), and held bodies capped at
 * 64 KiB/s past one body, 1 s over: Chromium on a loaded runner sends an 8 MiB POST every few
 * seconds, no faster.
 */
const BODY_LIMITS = `limits:
  cdp_bytes_per_sec: ${512 * MIB}
  cdp_burst_bytes: ${1024 * MIB}
  held_body_bytes_per_sec: ${64 * 1024}
  held_body_burst_bytes: ${BODY_BYTES}
  flood_seconds: 1
`;

/**
 * The hostile pages (the log flood is the hostile site's) and a calm one; counts what the write
 * flood got through.
 */
function serveFloodSite() {
  const page = (title: string, body: string) =>
    new Response(
      `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  let received = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    switch (url.pathname) {
      case "/calm":
        return page("Calm", "<h1>Calm page</h1><p>nothing happens here</p>");
      case "/write-flood":
        // Four uploads at a time of 8 MiB each: every one held whole by the proxy and judged.
        return page(
          "Write flood",
          `<h1>Write flood</h1><script>
const body = new Uint8Array(${BODY_BYTES}).fill(120);
let left = ${WRITES};
const t0 = Date.now();
const send = () => {
  if (left <= 0 || Date.now() - t0 > ${FLOOD_MS}) return;
  left--;
  fetch("/sink", { method: "POST", body }).catch(() => {}).finally(send);
};
for (let i = 0; i < 4; i++) send();
</script>`,
        );
      case "/sink": {
        const body = new Uint8Array(await req.arrayBuffer());
        received += body.length;
        return new Response("ok");
      }
    }
    const flood = LOG_FLOOD_ROUTES.find((r) => r.path === url.pathname);
    if (flood) return routeResponse(flood);
    return new Response("not found", { status: 404 });
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    received: () => received,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/**
 * B navigating to the calm page and taking a snapshot, again and again, while `during` runs,
 * with a rest of `KEEP_BROWSING_PAUSE_MS` after each round (back to back, B spent a core of its
 * own; a stall longer than the rest still lands on one of B's calls): every call must succeed
 * on B's own browser. Its latencies are logged, not asserted.
 */
async function bKeepsAnswering<T>(b: TestClient, origin: string, during: Promise<T>): Promise<T> {
  let done = false;
  let wake = () => {};
  const rest = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, KEEP_BROWSING_PAUSE_MS);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const latencies: number[] = [];
  const loop = (async () => {
    let rounds = 0;
    while (!done || rounds < 2) {
      const t0 = performance.now();
      const nav = await b.call("browser_navigate", { url: `${origin}/calm` });
      assert.equal(nav.isError, false, nav.text);
      assert.match(nav.text, /# Calm page/);
      const snap = await b.call("browser_snapshot");
      assert.equal(snap.isError, false, snap.text);
      assert.match(snap.text, /Calm page/);
      assert.doesNotMatch(nav.text + snap.text, /previous browser/);
      latencies.push(Math.round(performance.now() - t0));
      rounds++;
      if (!done) await rest();
    }
    return rounds;
  })();
  loop.catch(() => {});
  try {
    return await during;
  } finally {
    done = true;
    wake();
    assert.ok(await loop >= 2);
    log(`session_flooding_test: B's navigate+snapshot rounds took ${latencies.join(", ")} ms`);
  }
}

/**
 * A opens `path` and is ended with SESSION_FLOODING within the bound, audited once; B answers
 * all along; A's next call runs on a fresh browser with a notice naming the code.
 */
async function floodEndsOnlyItsSession(
  path: string,
  limits: string,
  check: (rows: { kind: string; reason?: string | null }[], received: number) => void = () => {},
): Promise<void> {
  // A machine at least as busy as two CPU hogs: a flood must be contained on a loaded machine too.
  await using _hogs = await busyMachine(2);
  await using site = serveFloodSite();
  await using h = await startHarness((s) =>
    `allowed_origins: [${s.origin}, ${site.origin}]\nread_only: false\n${limits}`
  );
  const a = await h.connect();
  const b = await h.connect();
  const warm = await b.call("browser_navigate", { url: `${site.origin}/calm` });
  assert.equal(warm.isError, false, warm.text);
  const ended = async () =>
    (await h.runtime.audit.rows()).filter((r) => r.kind === "browser_ended");
  await bKeepsAnswering(
    b,
    site.origin,
    (async () => {
      const opened = await a.call("browser_navigate", { url: `${site.origin}${path}` });
      // The flood slows its own session's calls (they may time out), and may end the browser
      // before the call is done: then the call says so, naming it.
      if (/BROWSER_LOST/.test(opened.text)) assert.match(opened.text, /SESSION_FLOODING/);
      assert.ok(
        await eventually(async () => (await ended()).length > 0, FLOOD_MS),
        "the flooding browser was ended in time",
      );
    })(),
  );
  const rows = await ended();
  assert.equal(rows.length, 1, JSON.stringify(rows));
  assert.equal(rows[0].reason, "SESSION_FLOODING");
  const next = await a.call("browser_navigate", { url: `${site.origin}/calm` });
  assert.equal(next.isError, false, next.text);
  assert.match(next.text, /# Calm page/);
  // The agent hears of it, naming the code: the call under way failed (or, when it was the
  // session's first, went on in a fresh browser with the notice), or the next call's notice.
  assert.match(
    a.outputs.join("\n"),
    /notice: the previous browser was ended by the runtime \(SESSION_FLOODING: the page made the browser send data faster than the runtime's byte-rate cap for too long\); a fresh one was started|BROWSER_LOST \(the runtime ended this session's browser \(SESSION_FLOODING: /,
  );
  assert.ok(
    (await h.runtime.audit.rows()).some((r) =>
      r.kind === "browser_lost" && r.reason === "SESSION_FLOODING"
    ),
  );
  check(await h.runtime.audit.rows(), site.received());
  // Never the page's data: the logged string and the bodies are runs of "x".
  for (const text of [...a.outputs, ...b.outputs]) assert.doesNotMatch(text, /x{1000}/);
}

Deno.test("SESSION_FLOODING: a page logging strings just under the CDP cap is slowed, then ended alone; another session keeps answering", async () => {
  await floodEndsOnlyItsSession("/log-flood", LIMITS);
});

Deno.test("SESSION_FLOODING: a page sending 8 MiB writes one after another is slowed, then ended alone; another session keeps answering", async () => {
  await floodEndsOnlyItsSession("/write-flood", BODY_LIMITS, (rows, received) => {
    // The proxy ended it: the body it would not read is refused and audited so.
    assert.ok(
      rows.some((r) => r.kind === "request" && r.reason === "SESSION_FLOODING"),
      JSON.stringify(rows.filter((r) => r.kind === "request").map((r) => r.reason)),
    );
    // Slowed before it was ended: far fewer bodies got through than the page sent.
    assert.ok(received < WRITES * BODY_BYTES, `${received} bytes reached the sink`);
    log(`session_flooding_test: ${Math.round(received / MIB)} MiB of writes reached the sink`);
  });
});

Deno.test("SESSION_FLOODING control: unmetered, the log flood makes the runtime read far more than the cap allows", async () => {
  await using site = serveFloodSite();
  const dir = await Deno.makeTempDir({ prefix: "omotai-flood-control-" });
  const profiles = await ProfileStore.open(dir);
  const session = new BrowserSession({
    profiles,
    executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    audit: { append: () => {} },
    cdpByteRate: false,
  });
  try {
    const byName = new Map(TOOLS.map((t) => [t.name, t]));
    const r = await runTool(byName.get("browser_navigate")!, { url: `${site.origin}/log-flood` }, {
      session,
      gate: allowAllGate,
    });
    assert.notEqual(r.isError, true);
    const start = performance.now();
    const events = () => session.browserProcess?.cdpBytesRead.events ?? 0;
    // What the test's caps would let through in the time the page took, at most, and more.
    const capped = () => 1 * MIB * (performance.now() - start) / 1000 + 8 * MIB;
    assert.ok(
      await eventually(() => events() > 2 * LOG_CHARS && events() > capped(), FLOOD_MS),
      `the page made the browser send ${events()} bytes of events`,
    );
    log(
      `session_flooding_test: unmetered, the page sent ${
        Math.round(events() / MIB)
      } MiB of events in ${Math.round((performance.now() - start) / 1000)} s`,
    );
    assert.equal(session.browserProcess?.fault, undefined);
  } finally {
    await session[Symbol.asyncDispose]();
    await profiles[Symbol.asyncDispose]();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
