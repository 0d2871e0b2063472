/**
 * The worker cap (`MAX_RUNNING_WORKERS`, runtime/browser/worker_cap.ts) in a real Chromium
 * through the runtime's own browser session: a page that starts many workers has only
 * the cap of them run, its calls answer, and the rest never start while those live; a page
 * whose pool of short-lived workers is larger than the cap gets through every one of them;
 * nested and shared workers count like any other.
 */
import assert from "node:assert/strict";
import { MAX_RUNNING_WORKERS } from "../runtime/browser/worker_cap.ts";
import { allowAllGate } from "../runtime/gate/gate.ts";
import { navigateTool } from "../runtime/tools/navigate.ts";
import { runTool } from "../runtime/tools/pipeline.ts";
import { snapshotTool } from "../runtime/tools/snapshot.ts";
import { html, type Pages } from "./fixtures/two_origins.ts";
import { ANSWER_BOUND_MS } from "./helpers/harness.ts";
import { freshCase, openSharedSession, type SharedSession } from "./helpers/shared_session.ts";

/** Workers the pages start: well past the cap. */
const STARTED = 40;
/**
 * How long a live worker stays at most (it ends with its page before that). Live, not
 * spinning: what is counted is workers, and a worker that waits costs no CPU (the starving
 * a page's spinning workers do is `/workers` of tests/hostile_pages_test.ts).
 */
const LIVE_MS = 60_000;
/** A worker's script: says it started, then stays alive, idle, for {@link LIVE_MS}. */
const LIVE = `postMessage("started"); setTimeout(() => close(), ${LIVE_MS});`;

/** A page starting `n` workers of `source` (a worker's script), counting their messages. */
function workersPage(n: number, source: string): string {
  return `<h1>Workers</h1><p id="out">started 0 done 0</p><script>
const url = URL.createObjectURL(new Blob([${JSON.stringify(source)}], { type: "text/javascript" }));
let started = 0, done = 0;
const show = () => { document.getElementById("out").textContent = "started " + started + " done " + done; };
for (let i = 0; i < ${n}; i++) {
  const w = new Worker(url);
  w.onmessage = (e) => { if (e.data === "started") started++; else if (e.data === "done") done++; show(); };
}
</script>`;
}

const PAGES: Pages = {
  // Each says it started, then stays alive.
  "/live": () => html(workersPage(STARTED, LIVE), "Live"),
  // Each says it started and is done after a short piece of work, then ends itself.
  "/pool": () =>
    html(
      workersPage(
        STARTED,
        `postMessage("started"); const end = Date.now() + 50; while (Date.now() < end) {} postMessage("done"); close();`,
      ),
      "Pool",
    ),
  // One worker that starts the rest as nested workers, and passes their messages on.
  "/nested": () =>
    html(
      workersPage(
        1,
        `const inner = URL.createObjectURL(new Blob([${
          JSON.stringify(LIVE)
        }], { type: "text/javascript" }));
postMessage("started");
for (let i = 0; i < ${STARTED}; i++) new Worker(inner).onmessage = (e) => postMessage(e.data);`,
      ),
      "Nested",
    ),
  // Shared workers, each of its own name (one each), in processes of their own.
  "/shared": () =>
    html(
      `<h1>Workers</h1><p id="out">started 0 done 0</p><script>
const url = URL.createObjectURL(new Blob([${
        JSON.stringify(
          `onconnect = (e) => { e.ports[0].postMessage("started"); setTimeout(() => close(), ${LIVE_MS}); };`,
        )
      }], { type: "text/javascript" }));
let started = 0;
for (let i = 0; i < ${STARTED}; i++) {
  const w = new SharedWorker(url, "w" + i);
  w.port.onmessage = () => { started++; document.getElementById("out").textContent = "started " + started + " done 0"; };
}
</script>`,
      "Shared",
    ),
  "/plain": () => html("<h1>Plain</h1>", "Plain"),
};

/** The page's `started N done M` line, from a fresh snapshot. */
async function counts(s: SharedSession): Promise<{ started: number; done: number }> {
  const r = await runTool(snapshotTool, {}, { session: s.session, gate: allowAllGate });
  const text = r.content.map((c) => ("text" in c ? c.text : "") ?? "").join("\n");
  assert.notEqual(r.isError, true, text.slice(0, 500));
  const m = text.match(/started (\d+) done (\d+)/);
  assert.ok(m, text.slice(0, 500));
  return { started: Number(m[1]), done: Number(m[2]) };
}

/** Snapshots until `ok` holds of the counts (within the answer bound); returns them. */
async function until(
  s: SharedSession,
  ok: (c: { started: number; done: number }) => boolean,
): Promise<{ started: number; done: number; ms: number }> {
  const t0 = Date.now();
  let c = await counts(s);
  while (!ok(c) && Date.now() - t0 < ANSWER_BOUND_MS) {
    await new Promise((r) => setTimeout(r, 100));
    c = await counts(s);
  }
  return { ...c, ms: Date.now() - t0 };
}

async function open(s: SharedSession, path: string): Promise<void> {
  const r = await runTool(navigateTool, { url: `${s.site.origin}${path}` }, {
    session: s.session,
    gate: allowAllGate,
  });
  assert.notEqual(r.isError, true, JSON.stringify(r.content).slice(0, 500));
}

Deno.test("MAX_RUNNING_WORKERS: a page's workers past the cap wait until one ends, in one browser session", async (t) => {
  await using s = await openSharedSession("omotai-worker-cap-");

  for (const path of ["/live", "/nested", "/shared"]) {
    await t.step(
      `${path}: only the cap of live workers runs, and the page answers`,
      async () => {
        await freshCase(s, PAGES);
        await open(s, path);
        // The nested page's outer worker is one of those that run.
        const cap = path === "/nested" ? MAX_RUNNING_WORKERS : MAX_RUNNING_WORKERS;
        const first = await until(s, (c) => c.started >= cap);
        assert.equal(first.started, cap, `started ${first.started}`);
        // A held worker would have started as fast as the first ones did: a window many times
        // that long sees none more.
        await new Promise((r) => setTimeout(r, Math.max(1_000, Math.min(5 * first.ms, 5_000))));
        assert.equal((await counts(s)).started, cap, "no worker past the cap started");
      },
    );
  }

  await t.step("/pool: a pool larger than the cap gets through every worker", async () => {
    await freshCase(s, PAGES);
    await open(s, "/pool");
    const last = await until(s, (c) => c.done >= STARTED);
    assert.deepEqual([last.started, last.done], [STARTED, STARTED]);
  });

  await t.step(
    "leaving the page ends its workers: the next page's pool runs whole",
    async () => {
      await freshCase(s, PAGES);
      await open(s, "/live");
      await until(s, (c) => c.started >= MAX_RUNNING_WORKERS);
      // Same tab, a new document: the live ones and those still held go with the old one.
      await open(s, "/plain");
      await open(s, "/pool");
      const last = await until(s, (c) => c.done >= STARTED);
      assert.deepEqual([last.started, last.done], [STARTED, STARTED]);
    },
  );
});
