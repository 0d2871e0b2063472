/**
 * Runs policy modules inside a dedicated worker so the engine can kill a module that loops
 * or hangs (the worker is terminated) without stopping the runtime.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import createPlugin, { type Plugin } from "@extism/extism";

/** Messages the engine sends. */
export type WorkerRequest = {
  type: "init";
  modules: { name: string; wasm: Uint8Array; sha256: string; config: string }[];
  /** Shared control words and data buffer (see CHANNEL_* in engine.ts). */
  control: SharedArrayBuffer;
  data: SharedArrayBuffer;
};

/** Messages the worker sends back. */
export type WorkerReply = { type: "ready"; error?: string };

let plugins: Plugin[] = [];

const enc = new TextEncoder();
const dec = new TextDecoder();

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const msg = e.data;
  try {
    plugins = await Promise.all(msg.modules.map((m) =>
      createPlugin({
        // The hash pins the exact bytes whose signature was verified.
        wasm: [{ data: m.wasm, hash: m.sha256 }],
        config: { policy: m.config },
      }, {
        useWasi: false,
        runInWorker: false,
        functions: {},
        allowedHosts: [],
        allowedPaths: {},
        config: { policy: m.config },
      })
    ));
  } catch (err) {
    self.postMessage({ type: "ready", error: (err as Error).message } satisfies WorkerReply);
    return;
  }
  self.postMessage({ type: "ready" } satisfies WorkerReply);
  await serve(new Int32Array(msg.control), new Uint8Array(msg.data));
};

/**
 * Answers requests over shared memory: a postMessage round trip costs more than all the
 * modules together, Atomics wake-ups cost a few microseconds.
 */
async function serve(control: Int32Array, data: Uint8Array): Promise<never> {
  for (;;) {
    // Sleep until a request (state 1) is posted; 0 is idle, 2 an answer not yet read, 3 stop.
    let state = Atomics.load(control, 0);
    // Requests come in bursts (a page load): stay awake a moment before sleeping, since a
    // wake-up from Atomics.wait costs more than the modules themselves.
    const spinUntil = performance.now() + 2;
    while (state !== 1 && performance.now() < spinUntil) state = Atomics.load(control, 0);
    while (state !== 1) {
      // 3: the engine is shutting this worker down.
      if (state === 3) {
        self.close();
        return await new Promise<never>(() => {});
      }
      Atomics.wait(control, 0, state);
      state = Atomics.load(control, 0);
    }
    // A batch: facts separated by newlines, answered with one output array per facts.
    const batch = dec.decode(data.slice(0, control[1])).split("\n");
    const answers: (string | null)[][] = [];
    for (const facts of batch) {
      const outputs: (string | null)[] = [];
      for (const p of plugins) {
        try {
          const out = await p.call("verdict", facts);
          outputs.push(out ? out.text() : null);
        } catch {
          // A trap: the host turns null into POLICY_ERROR.
          outputs.push(null);
        }
      }
      answers.push(outputs);
    }
    const bytes = enc.encode(JSON.stringify(answers));
    const n = Math.min(bytes.length, data.length);
    data.set(bytes.subarray(0, n));
    control[2] = n;
    Atomics.store(control, 0, 2);
    Atomics.notify(control, 0);
  }
}
