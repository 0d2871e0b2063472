/**
 * Entry point of the egress proxy process. It runs with network permission only
 * (`--allow-net`, nothing to read, write or run; with isolated browsers, also read and write
 * of the one directory holding the sessions' sockets, see `socket_listen.ts`) and takes its
 * orders as JSON lines on stdin: open a listener per browser session (a loopback port, or a
 * Unix socket), and the runtime's answer to every question. An unanswered question is a deny.
 *
 * @module
 */
import type { FromProxy, ProxyAnswer, ProxyQuestion } from "./proxy_protocol.ts";
import { Deadlines } from "./deadlines.ts";
import type { TlsTermination } from "./proxy_context.ts";
import { serveProxy } from "./proxy_server.ts";
import { openListener, type ToProxyMessage } from "./socket_listen.ts";
import { UpstreamWaits } from "./upstream_waits.ts";

const ANSWER_TIMEOUT_MS = 10_000;
/** Every question waits on these: one timer, not one per question. */
const deadlines = new Deadlines();

const encoder = new TextEncoder();
const listeners = new Map<number, Deno.Listener>();
/** Each listener's requests waiting on their upstream, which the runtime may release. */
const waits = new Map<number, UpstreamWaits>();
/**
 * Lines handled from the runtime: the order its `release` marks are told in (a wait is
 * stamped with it, `upstream_waits.ts`).
 */
let handledLines = 0;
const stamp = () => handledLines;
const pending = new Map<number, (a: ProxyAnswer) => void>();
let nextQid = 1;
const leaves = new Map<number, (leaf: { cert: string; key: string } | undefined) => void>();
let nextLid = 1;
let tls: TlsTermination | undefined;

/** Asks the runtime for a host's leaf; none after the answer timeout. */
function leafFor(host: string): Promise<{ cert: string; key: string } | undefined> {
  const lid = nextLid++;
  return new Promise((resolve) => {
    const wait = deadlines.arm(ANSWER_TIMEOUT_MS, () => {
      leaves.delete(lid);
      resolve(undefined);
    });
    leaves.set(lid, (leaf) => {
      deadlines.cancel(wait);
      resolve(leaf);
    });
    send({ op: "leaf", lid, host });
  });
}

let outgoing: string[] = [];

/** Queues a line; the questions of a burst of connections go out in one write. */
function send(message: FromProxy): void {
  outgoing.push(JSON.stringify(message) + "\n");
  if (outgoing.length === 1) queueMicrotask(flush);
}

function flush(): void {
  const bytes = encoder.encode(outgoing.join(""));
  outgoing = [];
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

function ask(listener: number, question: ProxyQuestion): Promise<ProxyAnswer> {
  const qid = nextQid++;
  return new Promise<ProxyAnswer>((resolve) => {
    const wait = deadlines.arm(ANSWER_TIMEOUT_MS, () => {
      pending.delete(qid);
      resolve({ allow: false, reason: "PROXY_NO_ANSWER", exact: false });
    });
    pending.set(qid, (a) => {
      deadlines.cancel(wait);
      resolve(a);
    });
    send({ op: "ask", qid, listener, question });
  });
}

function handle(message: ToProxyMessage): void {
  switch (message.op) {
    case "configure": {
      tls = message.terminateTls ? { leaf: leafFor, upstreamCa: message.upstreamCa } : undefined;
      return;
    }
    case "leaf": {
      const done = leaves.get(message.lid);
      leaves.delete(message.lid);
      done?.(
        typeof message.cert === "string" && typeof message.key === "string"
          ? { cert: message.cert, key: message.key }
          : undefined,
      );
      return;
    }
    case "listen": {
      const { listener: l, port } = openListener(message);
      listeners.set(message.listener, l);
      const mine = new UpstreamWaits(stamp);
      waits.set(message.listener, mine);
      serveProxy(l, {
        ask: (q) => ask(message.listener, q),
        refused: (question, reason) =>
          send({ op: "refused", listener: message.listener, question, reason }),
        tls,
        heldBodies: message.heldBodies,
        flooding: () => send({ op: "flooding", listener: message.listener }),
        waits: mine,
      }).catch(() => {});
      send({ op: "listening", listener: message.listener, port });
      return;
    }
    case "close": {
      try {
        listeners.get(message.listener)?.close();
      } catch { /* closed */ }
      listeners.delete(message.listener);
      waits.delete(message.listener);
      return;
    }
    case "release": {
      // Parsed: a mark that is not a count releases nothing.
      if (!Number.isSafeInteger(message.mark)) return;
      waits.get(message.listener)?.release(message.mark);
      return;
    }
    case "answer": {
      const done = pending.get(message.qid);
      pending.delete(message.qid);
      done?.({
        allow: message.allow === true,
        reason: String(message.reason),
        exact: message.exact === true,
      });
      return;
    }
  }
}

let buffered = "";
const decoder = new TextDecoder();
// Read directly, not through a stream: an answer arrives for nearly every request.
const chunk = new Uint8Array(64 * 1024);
for (;;) {
  const n = await Deno.stdin.read(chunk);
  if (n === null) break;
  buffered += decoder.decode(chunk.subarray(0, n), { stream: true });
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    // Counted before it is handled: an answer's request begins its wait stamped with it.
    handledLines++;
    try {
      handle(JSON.parse(line) as ToProxyMessage);
    } catch (err) {
      send({ op: "error", message: (err as Error).message });
    }
  }
}
// The runtime went away: so does every tunnel.
Deno.exit(0);
