/**
 * An attacker's pass on the class the worker cap (`MAX_RUNNING_WORKERS`,
 * runtime/browser/worker_cap.ts) closes one door of: a page that starts threads or processes
 * of its own that burn CPU, so its session stops answering in seconds. Each case is a way to
 * start such threads that the cap does not count (or may not see), in a real Chromium through
 * the runtime's own browser session; each asserts the session answers a snapshot within
 * {@link ANSWER_MS} (the page's, or the runtime's recovery from a tab that stopped answering)
 * and, when it read the page, that the page answered `Runtime.evaluate "0"` within it too.
 * The times of those and of `Accessibility.getFullAXTree` are printed, beside a plain page's
 * on the same loaded machine, so a report can tell starving from sharing the CPU.
 *
 * A case that fails here is a hole, not a flaky test. The pass found one, now closed:
 * `/frame-spin` and `/frames-spin`, a cross-site frame whose main thread spins, held the tab's
 * snapshot for as long as it spun, up to about a minute (28 s of a 30 s spin; 60 s of a 150 s
 * one, twice the CDP default timeout), while the page's own renderer answered in
 * milliseconds: the scan read each out-of-process frame with no bound of its own and the call
 * watch probes only the tab's renderer. A frame now gets `FRAME_ANSWER_MS` (8 s) for the
 * count and the read together, and the view says it was not read (`scan_frames.ts`).
 *
 * The suite runs the frame vectors (the hole's, and a cross-site frame's workers, which the cap
 * holds). The vectors that found no hole (audio worklets made in bulk, offline or real-time, by
 * a script or a click; 200 audio contexts; 24 video encoders), about 80 CPU-s together (the
 * encoders take both cores, the audio cases wait out their beacons), run with
 * `OMOTAI_THREAD_VECTORS=all`; what they measured is in docs/bench-results.md ("Round four").
 */
import assert from "node:assert/strict";
import { allowAllGate } from "../runtime/gate/gate.ts";
import { navigateTool } from "../runtime/tools/navigate.ts";
import { runTool } from "../runtime/tools/pipeline.ts";
import { snapshotTool } from "../runtime/tools/snapshot.ts";
import { html, type Pages } from "./fixtures/two_origins.ts";
import { freshCase, openSharedSession, type SharedSession } from "./helpers/shared_session.ts";

/** How long the page may take to answer each call while it runs (the brief's generous bound). */
const ANSWER_MS = 15_000;
/**
 * How long a measured call is waited for at most (past it, it counts as never answered): past
 * {@link SPIN_MS}, so a call held by a spin shows as answering when the spin ends.
 */
const GIVE_UP_MS = 60_000;
/** How long each spinning thread spins at most (it ends with its page before that). */
const SPIN_MS = 30_000;
/** Threads (audio contexts, workers) each case starts: well past the cap of 8. */
const THREADS = 24;
/** Realtime audio contexts the contexts case makes. */
const CONTEXTS = 200;
/** Cross-site frames (each a renderer process of its own) the frame case starts. */
const FRAMES = 3;

/** A page's `/ready?n=N` beacon: the page says N of its threads run (or `?err=...`). */
const BEACON = `const ready = (q) => fetch("/ready?" + q, { mode: "no-cors" }).catch(() => {});`;

/** Spins `SPIN_MS` at most, in whatever scope runs it. */
const SPIN = `const end = Date.now() + ${SPIN_MS}; while (Date.now() < end) {}`;

/** An AudioWorkletProcessor `spin` that says it runs, then spins in its first quantum. */
const SPIN_PROCESSOR = `class Spin extends AudioWorkletProcessor {
  process() {
    if (!this.said) { this.said = true; this.port.postMessage("started"); ${SPIN} }
    return true;
  }
}
registerProcessor("spin", Spin);`;

/**
 * A page starting `THREADS` audio contexts (`make`: an expression of one), each a spinning
 * worklet: at once, or (`onClick`) once the agent clicks it, when Chromium's autoplay policy
 * lets a realtime context run.
 */
function audioPage(make: string, onClick = false): string {
  return `<h1>Audio</h1><button>Continue</button><script>${BEACON}
const url = URL.createObjectURL(new Blob([${
    JSON.stringify(SPIN_PROCESSOR)
  }], { type: "text/javascript" }));
let started = 0;
window.contexts = [];
const start = () => { for (let i = 0; i < ${THREADS}; i++) {
  (async () => {
    const ctx = ${make};
    window.contexts.push(ctx);
    await ctx.audioWorklet.addModule(url);
    const node = new AudioWorkletNode(ctx, "spin");
    node.port.onmessage = () => { started++; ready("n=" + started); };
    node.connect(ctx.destination);
    if (ctx.startRendering) ctx.startRendering(); else await ctx.resume();
    ready("state=" + ctx.state);
  })().catch((e) => ready("err=" + encodeURIComponent(String(e))));
} };
${onClick ? `addEventListener("pointerdown", start, { once: true }); ready("armed");` : "start();"}
</script>`;
}

/** A page running `THREADS` VP9 software encoders on noise, as fast as they take frames. */
function encodersPage(): string {
  return `<h1>Encoders</h1><script>${BEACON}
const W = 1280, H = 720, end = Date.now() + ${SPIN_MS};
const data = new Uint8Array(W * H * 3 / 2);
for (let i = 0; i < data.length; i++) data[i] = Math.random() * 256;
let started = 0;
for (let i = 0; i < ${THREADS}; i++) {
  let ts = 0, said = false;
  const enc = new VideoEncoder({
    output: () => { if (!said) { said = true; started++; ready("n=" + started); } },
    error: (e) => ready("err=" + encodeURIComponent(String(e))),
  });
  enc.configure({ codec: "vp09.00.10.08", width: W, height: H, bitrate: 8e6, latencyMode: "realtime" });
  const pump = () => {
    if (Date.now() > end || enc.state !== "configured") return;
    while (enc.encodeQueueSize < 4) {
      const f = new VideoFrame(data, { format: "I420", codedWidth: W, codedHeight: H, timestamp: ts += 33333 });
      enc.encode(f, { keyFrame: ts % (33333 * 30) === 0 });
      f.close();
    }
    setTimeout(pump, 5);
  };
  pump();
}
</script>`;
}

/** A page starting `n` spinning dedicated workers, telling `tell(count)` (an expression) as each runs. */
function workersScript(n: number, tell: string): string {
  return `<script>
const url = URL.createObjectURL(new Blob([${
    JSON.stringify(`postMessage("started"); ${SPIN}`)
  }], { type: "text/javascript" }));
let started = 0;
for (let i = 0; i < ${n}; i++) new Worker(url).onmessage = () => { started++; ${tell}; };
</script>`;
}

/** The pages of every case; `other` is the second site's origin, `frames` the frame sites'. */
function pages(other: string, frames: readonly string[]): Pages {
  return {
    "/plain": () => html("<h1>Plain</h1><p>Nothing runs here.</p>", "Plain"),
    // Realtime contexts: each AudioWorklet runs on a real-time thread of the page's renderer
    // that no CDP target stands for, so the cap never sees it. Here (headless, no audio
    // device) no processor ever runs: a context stays suspended without a user's gesture, and
    // after one (the click case) nothing pulls audio from it. What costs is making them: 24 in
    // the page's script hold its main thread ~9 s (set up with the audio service, little CPU
    // spent), so the navigation is answered by the call watch's recovery (PAGE_UNRESPONSIVE)
    // or takes that long.
    "/audio-realtime": () => html(audioPage("new AudioContext()"), "Audio realtime"),
    "/audio-realtime-click": () => html(audioPage("new AudioContext()", true), "Audio click"),
    // Plain realtime contexts, made in one task once loaded: each is set up with the audio
    // service while the main thread waits (no worklet, little CPU spent). Raw calls to the page
    // wait past 30 s; the snapshot is answered in ~11 s by the call watch's recovery (its
    // renderer "stopped running": the tab closed, once the whole browser replaced).
    "/audio-contexts": () =>
      html(
        `<h1>Contexts</h1><script>${BEACON}
window.contexts = [];
onload = () => {
  ready("n=1");
  setTimeout(() => {
    for (let i = 0; i < ${CONTEXTS}; i++) window.contexts.push(new AudioContext());
    ready("made=" + window.contexts.length);
  }, 200);
};</script>`,
        "Audio contexts",
      ),
    // Software video encoders (WebCodecs) run on threads of the renderer's own pool: 24 of
    // them burn both cores (the navigation took 14-18 s), yet the page answers in milliseconds.
    "/encoders": () => html(encodersPage(), "Encoders"),
    // Offline contexts need no user activation and render as fast as the CPU lets them. Only
    // one of 24 processors ever ran: the others did not start while it spun (as if the
    // renderer's offline worklets shared one thread), and the page answers.
    "/audio-offline": () =>
      html(audioPage("new OfflineAudioContext(1, 44100 * 600, 44100)"), "Audio offline"),
    // Workers started by a frame of another site (its own renderer process): the tracker
    // attaches to them through the frame's session, so the cap holds them (8 of 24 run).
    "/frame-workers": () =>
      html(
        `<h1>Frame workers</h1><script>${BEACON}
addEventListener("message", (e) => ready("n=" + e.data));</script>
<iframe src="${other}/workers-inner"></iframe>`,
        "Frame workers",
      ),
    "/workers-inner": () =>
      html(`<p>inner</p>${workersScript(THREADS, `parent.postMessage(started, "*")`)}`, "Inner"),
    // Cross-site frames, each its own renderer process, each spinning on its own main thread
    // once loaded (after the top page's load, so navigating returns). FAILS today (see the
    // module comment): the page answers, its snapshot waits for the frames.
    "/frames-spin": () => framesPage(frames),
    // One such frame: whether the cost is per frame or the frame's alone.
    "/frame-spin": () => framesPage(frames.slice(0, 1)),
  };
}

/** A page framing `/spin-frame` of each of `frames`, telling how many said they run. */
function framesPage(frames: readonly string[]): Response {
  return html(
    `<h1>Frames</h1><script>${BEACON}
let started = 0;
addEventListener("message", () => { started++; ready("n=" + started); });</script>
${frames.map((f) => `<iframe src="${f}/spin-frame"></iframe>`).join("\n")}`,
    "Frames spin",
  );
}

/** What every frame site serves: a document that spins its main thread once loaded. */
const spinFrame = (): Response =>
  html(
    `<p>spinning frame</p><script>
onload = () => { parent.postMessage("started", "*"); setTimeout(() => { ${SPIN} }, 500); };
</script>`,
    "Spin frame",
  );

/** How long `p` took, or `GIVE_UP_MS` (and `answered` false) if it did not settle by then. */
async function timed(
  p: Promise<unknown>,
): Promise<{ ms: number; answered: boolean; error?: string }> {
  const t0 = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const give = new Promise<"gave-up">((r) => timer = setTimeout(() => r("gave-up"), GIVE_UP_MS));
  try {
    const r = await Promise.race([p.then(() => "ok" as const), give]);
    return { ms: Date.now() - t0, answered: r === "ok" };
  } catch (err) {
    return { ms: Date.now() - t0, answered: true, error: String(err).slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

/** One measurement of the page: each call in turn, as an agent's next call would be asked. */
interface Measured {
  evaluate: Awaited<ReturnType<typeof timed>>;
  axTree: Awaited<ReturnType<typeof timed>>;
  snapshot: Awaited<ReturnType<typeof timed>>;
  snapshotText: string;
}

/**
 * One measurement of the page, its three calls asked at once: the snapshot is the agent's next
 * call (through the runtime, its call watch included); the raw CDP calls show whether the
 * page's renderer itself answers.
 */
async function measure(s: SharedSession): Promise<Measured> {
  const page = await s.session.page();
  let snapshotText = "";
  const [evaluate, axTree, snapshot] = await Promise.all([
    timed(page.send("Runtime.evaluate", { expression: "0" })),
    timed(page.send("Accessibility.getFullAXTree", {})),
    timed(
      runTool(snapshotTool, {}, { session: s.session, gate: allowAllGate }).then((r) => {
        snapshotText = r.content.map((c) => ("text" in c ? c.text : "") ?? "").join("\n");
        if (r.isError) throw new Error(`snapshot error: ${snapshotText.slice(0, 200)}`);
      }),
    ),
  ]);
  return { evaluate, axTree, snapshot, snapshotText };
}

/**
 * Navigates to `path`; returns how long it took and whether the runtime answered it by
 * recovering from a renderer that stopped answering (`PAGE_UNRESPONSIVE`, within the bound).
 */
async function open(s: SharedSession, path: string): Promise<{ ms: number; recovered: boolean }> {
  const t0 = Date.now();
  const r = await runTool(navigateTool, { url: `${s.site.origin}${path}` }, {
    session: s.session,
    gate: allowAllGate,
  });
  const ms = Date.now() - t0;
  const text = JSON.stringify(r.content).slice(0, 500);
  if (r.isError !== true) return { ms, recovered: false };
  assert.match(text, /PAGE_UNRESPONSIVE/, text);
  assert.ok(ms < ANSWER_MS, `navigation recovered after ${ms} ms`);
  return { ms, recovered: true };
}

/** A user's click at the page's top left (a gesture, as the agent's click tool gives it). */
async function click(s: SharedSession): Promise<void> {
  const page = await s.session.page();
  for (const type of ["mousePressed", "mouseReleased"] as const) {
    await page.send("Input.dispatchMouseEvent", {
      type,
      x: 20,
      y: 20,
      button: "left",
      clickCount: 1,
    });
  }
}

/** The page's beacons so far: the highest `n` it told, and anything else it said. */
function beacons(s: SharedSession): { n: number; said: string[] } {
  const said = s.site.hits.filter((h) => h.startsWith("GET /ready?"));
  const n = Math.max(0, ...said.map((h) => Number(h.match(/n=(\d+)/)?.[1] ?? 0)));
  return { n, said: [...new Set(said.filter((h) => !/n=\d+/.test(h)))] };
}

/** Waits (within `ms`) until the page says `want` threads run; returns what it said. */
async function ready(
  s: SharedSession,
  want: number,
  ms = 20_000,
): Promise<ReturnType<typeof beacons>> {
  const end = Date.now() + ms;
  while (beacons(s).n < want && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
  // Let the threads that run settle into spinning before the page is asked anything.
  await new Promise((r) => setTimeout(r, 2_000));
  return beacons(s);
}

function report(
  name: string,
  nav: { ms: number; recovered: boolean },
  b: ReturnType<typeof beacons>,
  m: Measured,
): void {
  const f = (t: Awaited<ReturnType<typeof timed>>) =>
    t.answered ? `${t.ms} ms${t.error ? ` (${t.error})` : ""}` : `no answer in ${t.ms} ms`;
  console.log(
    `[worker_cap_attack] ${name}: navigate ${nav.ms} ms${
      nav.recovered ? " (PAGE_UNRESPONSIVE: tab closed)" : ""
    }; running ${b.n}${b.said.length ? ` (${b.said.join(", ")})` : ""}; Runtime.evaluate ${
      f(m.evaluate)
    }; getFullAXTree ${f(m.axTree)}; snapshot ${f(m.snapshot)}`,
  );
}

/**
 * Asserts the session answered its snapshot within {@link ANSWER_MS}: with the page, or with
 * the runtime's recovery from a renderer that stopped answering (`PAGE_UNRESPONSIVE`: the tab
 * closed, the agent told; an answer, not a wait). A page that was read must also have
 * answered the raw evaluation within the bound.
 */
function assertAnswers(m: Measured): void {
  const { snapshot, evaluate } = m;
  assert.ok(
    snapshot.answered && snapshot.ms < ANSWER_MS,
    `snapshot took ${snapshot.ms} ms (answered ${snapshot.answered})`,
  );
  if (snapshot.error) {
    assert.match(snapshot.error, /PAGE_UNRESPONSIVE/, snapshot.error);
    return;
  }
  assert.ok(
    evaluate.answered && !evaluate.error && evaluate.ms < ANSWER_MS,
    `Runtime.evaluate took ${evaluate.ms} ms ${evaluate.error ?? ""}`,
  );
}

Deno.test("MAX_RUNNING_WORKERS: threads and processes the cap does not count still leave the page answering", async (t) => {
  await using s = await openSharedSession("omotai-worker-cap-attack-");
  // One more site per frame (127.0.0.3, ...): each cross-site frame is a renderer of its own.
  const frameServers = Array.from(
    { length: FRAMES },
    (_, i) =>
      Deno.serve(
        { hostname: `127.0.0.${i + 3}`, port: 0, onListen: () => {} },
        (req) =>
          new URL(req.url).pathname === "/spin-frame"
            ? spinFrame()
            : new Response("", { status: 404 }),
      ),
  );
  await using _frames = {
    async [Symbol.asyncDispose]() {
      await Promise.all(frameServers.map((f) => f.shutdown()));
    },
  };
  const frameOrigins = frameServers.map((f, i) => `http://127.0.0.${i + 3}:${f.addr.port}`);
  const all = () => pages(s.site.otherOrigin, frameOrigins);

  await t.step("/plain: the baseline on this machine now", async () => {
    await freshCase(s, all());
    const nav = await open(s, "/plain");
    const m = await measure(s);
    report("/plain", nav, beacons(s), m);
    assertAnswers(m);
  });

  const everyVector = Deno.env.get("OMOTAI_THREAD_VECTORS") === "all";
  const vectors: [string, number][] = [
    ...(everyVector
      ? [
        ["/audio-realtime", THREADS],
        ["/audio-realtime-click", THREADS],
        ["/audio-contexts", 1],
        ["/encoders", THREADS],
        ["/audio-offline", THREADS],
      ] as [string, number][]
      : []),
    ["/frame-workers", 8],
    ["/frame-spin", 1],
    ["/frames-spin", FRAMES],
  ];
  for (const [path, want] of vectors) {
    await t.step(`${path}: the page answers while its threads spin`, async () => {
      await freshCase(s, all());
      const nav = await open(s, path);
      // A navigation the runtime answered by closing a tab that stopped answering: what is
      // left to ask is whether the session answers after (its fresh tab).
      if (!nav.recovered && path === "/audio-realtime-click") await click(s);
      const b = nav.recovered ? beacons(s) : await ready(s, want);
      const m = await measure(s);
      report(path, nav, b, m);
      assertAnswers(m);
    });
  }
  // Close the last case's tab now: its threads stop before the browser goes.
  await freshCase(s, {});
});
