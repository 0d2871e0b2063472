/**
 * The runtime's side of the egress proxy: spawns the proxy process with network
 * permission only, opens one listener per browser session, and answers its questions with
 * the session's judge. If the proxy process dies, its listeners die with it and Chromium's
 * connections fail: the browser is never left with a direct route out.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { OmotaiError } from "../errors.ts";
import type { FromProxy, ProxyAnswer, ProxyQuestion, ToProxy } from "../proxy/proxy_protocol.ts";
import type { TlsAuthority } from "./tls_authority.ts";

/** How the proxy process runs. */
export interface EgressProxyOptions {
  /**
   * With an authority, the proxy terminates TLS inside every CONNECT tunnel (leaves minted
   * here) and judges each request whole; without one, tunnels are judged by host and port.
   */
  authority?: TlsAuthority;
  /** Extra roots for upstream TLS (tests' own CA); the system roots and `DENO_CERT` apply. */
  upstreamCa?: string[];
}

/** Decides a session's proxy questions and hears about refusals after lookup. */
export interface ProxyJudge {
  ask(question: ProxyQuestion): Promise<ProxyAnswer>;
  refused(question: ProxyQuestion, reason: string): void;
}

/** A listener of the proxy bound to one session. */
export interface ProxyListener extends Disposable {
  readonly port: number;
}

const PROXY_MAIN = fileURLToPath(new URL("../proxy/proxy_main.ts", import.meta.url));

/** The proxy process. */
export class EgressProxy implements AsyncDisposable {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #judges = new Map<number, ProxyJudge>();
  #waiting = new Map<number, (port: number) => void>();
  #next = 1;
  #closed = false;
  readonly #authority: TlsAuthority | undefined;
  readonly exited: Promise<void>;

  private constructor(child: Deno.ChildProcess, options: EgressProxyOptions) {
    this.#child = child;
    this.#authority = options.authority;
    this.#writer = child.stdin.getWriter();
    this.exited = child.status.then(() => {
      this.#closed = true;
    });
    this.#read().catch(() => {});
    if (options.authority) {
      this.#send({ op: "configure", terminateTls: true, upstreamCa: options.upstreamCa })
        .catch(() => {});
    }
  }

  /** The authority whose leaves the proxy presents, if it terminates TLS. */
  get authority(): TlsAuthority | undefined {
    return this.#authority;
  }

  /** Starts the proxy process (`deno run --allow-net` and nothing else). */
  static start(options: EgressProxyOptions = {}): EgressProxy {
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-config",
          "--no-lock",
          "--quiet",
          "--no-prompt",
          "--allow-net",
          PROXY_MAIN,
        ],
        stdin: "piped",
        stdout: "piped",
        stderr: "inherit",
        env: { NO_COLOR: "1" },
      }).spawn();
    } catch (err) {
      throw new OmotaiError(
        "EGRESS_PROXY_FAILED",
        `cannot start the egress proxy: ${(err as Error).message}`,
      );
    }
    return new EgressProxy(child, options);
  }

  /** Opens a listener for one session; every question on it goes to `judge`. */
  async listen(judge: ProxyJudge): Promise<ProxyListener> {
    if (this.#closed) {
      throw new OmotaiError("EGRESS_PROXY_FAILED", "the egress proxy is not running");
    }
    const id = this.#next++;
    this.#judges.set(id, judge);
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new OmotaiError("EGRESS_PROXY_FAILED", "the egress proxy did not open a port")),
        10_000,
      );
      this.#waiting.set(id, (p) => {
        clearTimeout(timer);
        resolve(p);
      });
      this.#send({ op: "listen", listener: id }).catch(reject);
    });
    return {
      port,
      [Symbol.dispose]: () => {
        this.#judges.delete(id);
        this.#send({ op: "close", listener: id }).catch(() => {});
      },
    };
  }

  /** Lines waiting for the next write: the answers to a burst of questions go out as one. */
  #outgoing: string[] = [];
  #flushed: Promise<void> | undefined;

  #send(message: ToProxy): Promise<void> {
    this.#outgoing.push(JSON.stringify(message) + "\n");
    this.#flushed ??= Promise.resolve().then(() => {
      const text = this.#outgoing.join("");
      this.#outgoing = [];
      this.#flushed = undefined;
      return this.#writer.write(new TextEncoder().encode(text));
    });
    return this.#flushed;
  }

  async #read(): Promise<void> {
    let buffered = "";
    const decoder = new TextDecoder();
    for await (const chunk of this.#child.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let message: FromProxy;
        try {
          message = JSON.parse(line) as FromProxy;
        } catch {
          continue;
        }
        this.#onMessage(message);
      }
    }
  }

  #onMessage(message: FromProxy): void {
    if (message.op === "listening") {
      this.#waiting.get(message.listener)?.(message.port);
      this.#waiting.delete(message.listener);
    } else if (message.op === "ask") {
      const judge = this.#judges.get(message.listener);
      const denied = (reason: string): ProxyAnswer => ({ allow: false, reason, exact: false });
      const answer = judge
        ? judge.ask(message.question).catch(() => denied("GATE_ERROR"))
        : Promise.resolve(denied("SESSION_CLOSED"));
      answer.then((a) => this.#send({ op: "answer", qid: message.qid, ...a })).catch(() => {});
    } else if (message.op === "leaf") {
      const leaf = this.#authority?.leafFor(message.host) ?? Promise.resolve(undefined);
      leaf.then(
        (l) => this.#send({ op: "leaf", lid: message.lid, ...(l ?? {}) }),
        () => this.#send({ op: "leaf", lid: message.lid }),
      ).catch(() => {});
    } else if (message.op === "refused") {
      this.#judges.get(message.listener)?.refused(message.question, message.reason);
    } else if (message.op === "error") {
      console.error(`omotai: egress proxy: ${message.message.slice(0, 200)}`);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    await this.#writer.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        this.#child.kill("SIGKILL");
      } catch { /* gone */ }
    }, 2_000);
    await this.exited;
    clearTimeout(timer);
  }
}
