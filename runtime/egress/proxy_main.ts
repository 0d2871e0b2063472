/**
 * Entry point of the egress proxy process. It runs with network permission only
 * (`--allow-net`, nothing to read, write or run) and takes its orders as JSON lines on
 * stdin: open a listener per browser session, and the runtime's answer to every question.
 * An unanswered question is a deny.
 *
 * @module
 */
import type { FromProxy, ProxyQuestion, Resolution, ToProxy } from "./proxy_protocol.ts";
import { serveProxy } from "./proxy_server.ts";

const ANSWER_TIMEOUT_MS = 10_000;

const encoder = new TextEncoder();
const listeners = new Map<number, Deno.Listener>();
const pending = new Map<number, (a: { allow: boolean; reason: string }) => void>();
let nextQid = 1;

function send(message: FromProxy): void {
  const bytes = encoder.encode(JSON.stringify(message) + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

function ask(listener: number, question: ProxyQuestion, resolution: Resolution) {
  const qid = nextQid++;
  return new Promise<{ allow: boolean; reason: string }>((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(qid);
      resolve({ allow: false, reason: "PROXY_NO_ANSWER" });
    }, ANSWER_TIMEOUT_MS);
    pending.set(qid, (a) => {
      clearTimeout(timer);
      resolve(a);
    });
    send({ op: "ask", qid, listener, question, resolution });
  });
}

function handle(message: ToProxy): void {
  switch (message.op) {
    case "listen": {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      listeners.set(message.listener, l);
      serveProxy(l, (q, r) => ask(message.listener, q, r)).catch(() => {});
      send({ op: "listening", listener: message.listener, port: (l.addr as Deno.NetAddr).port });
      return;
    }
    case "close": {
      try {
        listeners.get(message.listener)?.close();
      } catch { /* closed */ }
      listeners.delete(message.listener);
      return;
    }
    case "answer": {
      const done = pending.get(message.qid);
      pending.delete(message.qid);
      done?.({ allow: message.allow === true, reason: String(message.reason) });
      return;
    }
  }
}

let buffered = "";
const decoder = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk, { stream: true });
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    try {
      handle(JSON.parse(line) as ToProxy);
    } catch (err) {
      send({ op: "error", message: (err as Error).message });
    }
  }
}
// The runtime went away: so does every tunnel.
Deno.exit(0);
