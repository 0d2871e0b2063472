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
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ByteRateLimits, describeError } from "../../cdp/mod.ts";
import { log, OmotaiError } from "../mod.ts";
import type { FromProxy, ProxyAnswer, ProxyQuestion, ToProxyMessage } from "../proxy/mod.ts";
import { readBoundedLines } from "./bounded_lines.ts";
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
  /**
   * Listen on Unix sockets below this directory instead of loopback ports: one private
   * directory (0700) per listener, `<socketDir>/l<N>/proxy.sock`, for browsers in their own
   * network namespace. The directory must exist, mode 0700; the proxy process may read and
   * write it and nothing else of the file system.
   */
  socketDir?: string;
  /** Who owns each listener's directory and socket (the browser's user, when it has its own). */
  socketOwner?: { uid: number; gid: number };
}

/** Decides a session's proxy questions and hears about refusals after lookup. */
export interface ProxyJudge {
  ask(question: ProxyQuestion): Promise<ProxyAnswer>;
  refused(question: ProxyQuestion, reason: string): void;
  /**
   * The listener's browser kept sending held bodies over the proxy's rate for too long: its
   * session ends that browser (`SESSION_FLOODING`). May be told more than once.
   */
  flooding?(): void;
}

/** A listener of the proxy bound to one session. */
export interface ProxyListener extends Disposable {
  /**
   * The loopback port; for a socket listener, the port its forwarder listens on inside the
   * browser's namespace (one per listener, so `socketOf()` finds the socket by it).
   */
  readonly port: number;
  /** The listener's Unix socket, when the proxy listens on sockets. */
  readonly socket?: string;
  /**
   * Has the proxy release this listener's upstream waits judged before `mark` (an
   * `EgressProxy.mark()`): each answered `504 UPSTREAM_RELEASED`, reported as refused.
   */
  releaseWaits(mark: number): void;
}

/** Forwarder ports inside a namespace: `FORWARDER_PORT_BASE + (N mod 20000)` for listener N. */
export const FORWARDER_PORT_BASE = 30_000;

/** The longest Unix socket path Linux takes (`sun_path` is 108 bytes with its NUL). */
export const MAX_SOCKET_PATH = 107;

/** A listener's socket path below `socketDir` (what `MAX_SOCKET_PATH` is checked against). */
export function socketPathFor(socketDir: string, listener: number): string {
  return join(socketDir, `l${listener}`, "proxy.sock");
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
  readonly #socketDir: string | undefined;
  readonly #socketOwner: { uid: number; gid: number } | undefined;
  /** How fast each new listener's held bodies are taken in; the proxy's default when unset. */
  #heldBodies: ByteRateLimits | undefined;
  /** Socket paths of open socket listeners, by forwarder port. */
  #sockets = new Map<number, string>();
  readonly exited: Promise<void>;
  /** Lines sent to the proxy so far, in the order it handles them (see {@link mark}). */
  #sentLines = 0;

  private constructor(child: ProxyProcess, options: EgressProxyOptions) {
    this.#child = child;
    this.#authority = options.authority;
    this.#socketDir = options.socketDir;
    this.#socketOwner = options.socketOwner;
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

  /** The Unix socket of the open listener whose forwarder port is `port`, if any. */
  socketOf(port: number): string | undefined {
    return this.#sockets.get(port);
  }

  /** Whether listeners are Unix sockets (browsers in their own namespace) or loopback ports. */
  get listensOnSockets(): boolean {
    return this.#socketDir !== undefined;
  }

  /**
   * Starts the proxy process: `deno run --allow-net`, and with `socketDir` read and write of
   * that one directory (a Unix listener needs both in Deno 2), nothing else.
   */
  static start(options: EgressProxyOptions = {}): EgressProxy {
    const socketFlags: string[] = [];
    if (options.socketDir !== undefined) {
      // Deno splits a permission list on commas and has no escape for one.
      if (options.socketDir.includes(",")) {
        throw new OmotaiError(
          "EGRESS_PROXY_FAILED",
          `the socket directory ${options.socketDir} holds a comma, which a Deno permission cannot carry`,
        );
      }
      socketFlags.push(`--allow-read=${options.socketDir}`, `--allow-write=${options.socketDir}`);
    }
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
          ...socketFlags,
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

  /**
   * Sets how fast the held bodies of listeners opened from now on are taken in (the runtime's
   * policy's `limits`, read after the proxy started); default `HELD_BODY_RATE`.
   */
  meterHeldBodies(limits: ByteRateLimits): void {
    this.#heldBodies = { ...limits };
  }

  /**
   * The runtime's place in its lines to the proxy: how many it has sent. A request judged
   * later is answered by a later line, so the proxy tells the waits of requests judged before
   * a mark from all others by that count alone, whatever either process's clock says
   * (`upstream_waits.ts` in runtime/proxy/).
   */
  mark(): number {
    return this.#sentLines;
  }

  /** Sends the release of listener `id`'s upstream waits judged before `mark`. */
  #releaseWaits(id: number, mark: number): void {
    this.#send({ op: "release", listener: id, mark }).catch(() => {});
  }

  /** Opens a listener for one session; every question on it goes to `judge`. */
  async listen(judge: ProxyJudge): Promise<ProxyListener> {
    if (this.#closed) {
      throw new OmotaiError("EGRESS_PROXY_FAILED", "the egress proxy is not running");
    }
    const id = this.#next++;
    if (this.#socketDir !== undefined) {
      return await this.#listenOnSocket(id, this.#socketDir, judge);
    }
    this.#judges.set(id, judge);
    const port = await this.#opened(id, { op: "listen", listener: id, ...this.#metered() });
    return {
      port,
      releaseWaits: (mark) => this.#releaseWaits(id, mark),
      [Symbol.dispose]: () => {
        this.#judges.delete(id);
        this.#send({ op: "close", listener: id }).catch(() => {});
      },
    };
  }

  /**
   * A socket listener: its private directory (0700, the browser user's), the socket in it
   * (0600, the browser user's; root's proxy needs no permission on it), removed on dispose.
   */
  async #listenOnSocket(id: number, socketDir: string, judge: ProxyJudge): Promise<ProxyListener> {
    const path = socketPathFor(socketDir, id);
    if (new TextEncoder().encode(path).length > MAX_SOCKET_PATH) {
      throw new OmotaiError(
        "EGRESS_PROXY_FAILED",
        `the proxy socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes: use a shorter data dir`,
      );
    }
    const dir = join(socketDir, `l${id}`);
    const owner = this.#socketOwner;
    const removeDir = () => Deno.remove(dir, { recursive: true }).catch(() => {});
    const port = FORWARDER_PORT_BASE + (id % 20_000);
    try {
      await Deno.mkdir(dir, { mode: 0o700 });
      await Deno.chmod(dir, 0o700);
      if (owner) await Deno.chown(dir, owner.uid, owner.gid);
      this.#judges.set(id, judge);
      await this.#opened(id, { op: "listen", listener: id, path, ...this.#metered() });
      // Connecting to a socket takes write permission on it: its owner's alone.
      await Deno.chmod(path, 0o600);
      if (owner) await Deno.chown(path, owner.uid, owner.gid);
    } catch (err) {
      this.#judges.delete(id);
      this.#send({ op: "close", listener: id }).catch(() => {});
      await removeDir();
      if (err instanceof OmotaiError) throw err;
      throw new OmotaiError(
        "EGRESS_PROXY_FAILED",
        `the egress proxy could not open its socket: ${describeError(err)}`,
        { cause: err },
      );
    }
    this.#sockets.set(port, path);
    return {
      port,
      socket: path,
      releaseWaits: (mark) => this.#releaseWaits(id, mark),
      [Symbol.dispose]: () => {
        this.#judges.delete(id);
        this.#sockets.delete(port);
        this.#send({ op: "close", listener: id }).catch(() => {});
        removeDir();
      },
    };
  }

  #metered(): { heldBodies?: ByteRateLimits } {
    return this.#heldBodies ? { heldBodies: this.#heldBodies } : {};
  }

  /** Sends a `listen` and resolves with the port the proxy reports (0 for a socket). */
  #opened(id: number, message: ToProxyMessage): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new OmotaiError("EGRESS_PROXY_FAILED", "the egress proxy did not open a port")),
        10_000,
      );
      this.#waiting.set(id, (p) => {
        clearTimeout(timer);
        resolve(p);
      });
      this.#send(message).catch(reject);
    });
  }

  /** Lines waiting for the next write: the answers to a burst of questions go out as one. */
  #outgoing: string[] = [];
  #flushed: Promise<void> | undefined;

  #send(message: ToProxyMessage): Promise<void> {
    this.#outgoing.push(JSON.stringify(message) + "\n");
    // Counted as queued: the proxy reads the lines in this order.
    this.#sentLines++;
    this.#flushed ??= Promise.resolve().then(() => {
      const text = this.#outgoing.join("");
      this.#outgoing = [];
      this.#flushed = undefined;
      return this.#writer.write(new TextEncoder().encode(text));
    });
    return this.#flushed;
  }

  #read(): Promise<void> {
    return readBoundedLines(this.#child.stdout, {
      max: MAX_PROXY_LINE,
      onOverlong: () =>
        log(`egress proxy: a message over ${MAX_PROXY_LINE} characters was dropped`),
      onLine: (line) => this.#onLine(line),
    });
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
    } else if (message.op === "flooding") {
      const judge = this.#judges.get(message.listener);
      if (judge?.flooding) {
        log(`egress proxy: listener ${message.listener} sent held bodies over its rate too long`);
        judge.flooding();
      }
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
