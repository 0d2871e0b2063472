/**
 * The runtime's side of the egress proxy: spawns the proxy process with network
 * permission only, opens one listener per browser session, and answers its questions with
 * the session's judge. If the proxy process dies, its listeners die with it and Chromium's
 * connections fail: the browser is never left with a direct route out.
 *
 * One read loop serves every session's listener, so nothing one message does may end it: a
 * line that is not a message is logged and skipped, a judge that throws (at once or later)
 * answers that question `GATE_ERROR` (recorded as that session's refusal), a `refused`
 * handler that throws is logged. Each failure stays with its question and its session.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { describeError } from "../../cdp/mod.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
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

/** The proxy process as the runtime drives it: a `Deno.ChildProcess`, or a test's stand-in. */
export interface ProxyProcess {
  /** The process id, when it is a real process (a test's stand-in has none). */
  readonly pid?: number;
  readonly stdin: WritableStream<Uint8Array>;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly status: Promise<unknown>;
  kill(signal?: Deno.Signal): void;
}

/**
 * Characters one line from the proxy may have: a question carries at most a held body of
 * `MAX_HELD_BODY` (8 MiB, ~11 Mi characters in base64) beside its URL. A longer line is
 * discarded as it streams in, never held whole.
 */
export const MAX_PROXY_LINE = 16 * 1024 * 1024;

const PROXY_MAIN = fileURLToPath(new URL("../proxy/proxy_main.ts", import.meta.url));

const denied = (reason: string): ProxyAnswer => ({ allow: false, reason, exact: false });

/** The proxy process. */
export class EgressProxy implements AsyncDisposable {
  #child: ProxyProcess;

  /** The proxy process's id (none for a test's stand-in). */
  get pid(): number | undefined {
    return this.#child.pid;
  }
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #judges = new Map<number, ProxyJudge>();
  #waiting = new Map<number, (port: number) => void>();
  #next = 1;
  #closed = false;
  readonly #authority: TlsAuthority | undefined;
  readonly exited: Promise<void>;

  private constructor(child: ProxyProcess, options: EgressProxyOptions) {
    this.#child = child;
    this.#authority = options.authority;
    this.#writer = child.stdin.getWriter();
    this.exited = child.status.then(() => {
      this.#closed = true;
    }, () => {
      this.#closed = true;
    });
    this.#read().catch((err) =>
      log(`egress proxy: reading its answers ended: ${describeError(err)}`)
    );
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

  /** Drives a proxy process that is already running (tests hand in a stand-in). */
  static over(child: ProxyProcess, options: EgressProxyOptions = {}): EgressProxy {
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
    const decoder = new TextDecoder();
    let buffered = "";
    /** Inside a line over the cap: everything up to its newline is dropped. */
    let skipping = false;
    for await (const chunk of this.#child.stdout) {
      const text = decoder.decode(chunk, { stream: true });
      let from = 0;
      while (from < text.length) {
        const nl = text.indexOf("\n", from);
        const end = nl < 0 ? text.length : nl;
        if (!skipping && buffered.length + (end - from) > MAX_PROXY_LINE) {
          log(`egress proxy: a message over ${MAX_PROXY_LINE} characters was dropped`);
          buffered = "";
          skipping = true;
        }
        if (!skipping) buffered += text.slice(from, end);
        if (nl < 0) break;
        from = nl + 1;
        if (skipping) {
          skipping = false;
          continue;
        }
        const line = buffered;
        buffered = "";
        this.#onLine(line);
      }
    }
  }

  /** Handles one line; nothing it does leaves it (the loop serves every session). */
  #onLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      // Never the parser's message: it quotes the line.
      log("egress proxy: a line that is not JSON was skipped");
      return;
    }
    if (
      typeof message !== "object" || message === null ||
      typeof (message as { op?: unknown }).op !== "string"
    ) {
      log("egress proxy: a line that is not a message was skipped");
      return;
    }
    try {
      this.#onMessage(message as FromProxy);
    } catch (err) {
      log(
        `egress proxy: handling a ${(message as FromProxy).op} message failed: ${
          describeError(err)
        }`,
      );
    }
  }

  #onMessage(message: FromProxy): void {
    if (message.op === "listening") {
      this.#waiting.get(message.listener)?.(message.port);
      this.#waiting.delete(message.listener);
    } else if (message.op === "ask") {
      const judge = this.#judges.get(message.listener);
      const answer = judge
        ? this.#ask(judge, message.question)
        : Promise.resolve(denied("SESSION_CLOSED"));
      answer.then((a) => this.#send({ op: "answer", qid: message.qid, ...a }))
        .catch((err) => log(`egress proxy: an answer was not sent: ${describeError(err)}`));
    } else if (message.op === "leaf") {
      // A sync throw becomes a rejection: the proxy then gets "no leaf" rather than silence.
      new Promise<Awaited<ReturnType<TlsAuthority["leafFor"]>> | undefined>((resolve) =>
        resolve(this.#authority?.leafFor(message.host))
      ).then(
        (l) => this.#send({ op: "leaf", lid: message.lid, ...(l ?? {}) }),
        () => this.#send({ op: "leaf", lid: message.lid }),
      ).catch((err) => log(`egress proxy: a leaf was not sent: ${describeError(err)}`));
    } else if (message.op === "refused") {
      const judge = this.#judges.get(message.listener);
      if (judge) this.#refused(judge, message.question, message.reason);
    } else if (message.op === "error") {
      log(`egress proxy: ${String(message.message).slice(0, 200)}`);
    }
  }

  /**
   * The judge's answer, or a refusal `GATE_ERROR` when it throws or rejects: audited through
   * the session's own `refused` (the judge could not write its row), the question denied.
   */
  #ask(judge: ProxyJudge, question: ProxyQuestion): Promise<ProxyAnswer> {
    return new Promise<ProxyAnswer>((resolve) => resolve(judge.ask(question))).then(
      (a) => answerOf(a),
      (err) => {
        log(`egress proxy: a judge failed: ${describeError(err)}`);
        this.#refused(judge, question, "GATE_ERROR");
        return denied("GATE_ERROR");
      },
    );
  }

  #refused(judge: ProxyJudge, question: ProxyQuestion, reason: string): void {
    try {
      const out: unknown = judge.refused(question, reason);
      if (out instanceof Promise) {
        out.catch((err) => log(`egress proxy: recording a refusal failed: ${describeError(err)}`));
      }
    } catch (err) {
      log(`egress proxy: recording a refusal failed: ${describeError(err)}`);
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

/** A judge's answer as sent: anything but an explicit allow is a refusal. */
function answerOf(a: ProxyAnswer | undefined): ProxyAnswer {
  if (typeof a !== "object" || a === null) return denied("GATE_ERROR");
  return {
    allow: a.allow === true,
    reason: typeof a.reason === "string" ? a.reason : a.allow === true ? "ALLOWED" : "GATE_ERROR",
    exact: a.exact === true,
  };
}
