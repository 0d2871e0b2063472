/**
 * Runs policy modules inside a dedicated worker so the engine can kill a module that loops
 * or hangs (the worker is terminated) without stopping the runtime.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import createPlugin, { type Plugin } from "@extism/extism";

/** Messages the engine sends. */
export type WorkerRequest =
  | {
    type: "init";
    modules: { name: string; wasm: Uint8Array; sha256: string; config: string }[];
  }
  | { type: "eval"; id: number; facts: string };

/** Messages the worker sends back. */
export type WorkerReply =
  | { type: "ready"; error?: string }
  | { type: "result"; id: number; outputs: (string | null)[] };

let plugins: Plugin[] = [];

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const msg = e.data;
  if (msg.type === "init") {
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
      self.postMessage({ type: "ready" } satisfies WorkerReply);
    } catch (err) {
      self.postMessage({ type: "ready", error: (err as Error).message } satisfies WorkerReply);
    }
    return;
  }
  const outputs: (string | null)[] = [];
  for (const p of plugins) {
    try {
      const out = await p.call("verdict", msg.facts);
      outputs.push(out ? out.text() : null);
    } catch {
      // A trap: the host turns null into POLICY_ERROR.
      outputs.push(null);
    }
  }
  self.postMessage({ type: "result", id: msg.id, outputs } satisfies WorkerReply);
};
