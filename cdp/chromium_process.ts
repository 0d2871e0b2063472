/**
 * Finds and starts Chromium with hardened flags, talking CDP over
 * `--remote-debugging-pipe` only: no debugging port is ever opened.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { CdpConnection, type CdpLog } from "./connection.ts";
import { BrowserLaunchError, type CdpFaultError } from "./errors.ts";
import { type PipeReadable, PipeTransport, type PipeWritable } from "./pipe_transport.ts";
import type { ByteRateLimits } from "../shared/mod.ts";

/**
 * Debian's headless shell (package `chromium-headless-shell`): the same Chromium, engine,
 * sandbox and site isolation (`--site-per-process` is passed), without the desktop browser's
 * layer (profile services, WebUI, extensions). A session's browser costs ~30 % less memory and
 * loads a page sooner (docs/bench-results.md, "Ten agents"). Its `/usr/bin` script does not
 * `exec`, so the binary itself is named: stopping the process started stops the browser.
 */
export const HEADLESS_SHELL_CANDIDATES: readonly string[] = [
  "/usr/lib/chromium/chromium-headless-shell",
];

/** Whether `path` names a headless shell (a candidate, or a build of that name elsewhere). */
export function isHeadlessShell(path: string): boolean {
  return HEADLESS_SHELL_CANDIDATES.includes(path) ||
    /headless[-_]shell/.test(path.split("/").pop() ?? "");
}

/** Full browsers, tried after the headless shell (and alone for a window: `headful`). */
export const BROWSER_CANDIDATES: readonly string[] = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
];

/**
 * Features every launch turns off (one `--disable-features`: Chromium reads the last one).
 * Memory per session was measured with each (docs/bench-results.md, "Ten agents").
 */
export const DISABLED_FEATURES: readonly string[] = [
  // A restored back/forward-cache page would revive a document whose refs were retired.
  "BackForwardCache",
  "Translate",
  "OptimizationHints",
  "MediaRouter",
  "AutofillServerCommunication",
  "InterestFeedContentSuggestions",
  // Headless still preloads the omnibox popup's WebUI in a renderer of its own (~38 MB).
  "WebUIOmniboxPopup",
  "WebUIOmniboxAimPopup",
  "WebUIOmniboxFullPopup",
  "PreloadTopChromeWebUI",
  // A spare renderer kept ready for the next site: a process per browser for nothing.
  "SpareRendererForSitePerProcess",
  // Ad auctions, shared storage, fenced frames, topics, private aggregation: the full browser
  // gates them on settings a fresh profile has off, the headless shell allows them outright.
  // They make requests of the browser's own (worklets, reports), outside any tab's guard.
  "Fledge",
  "InterestGroupStorage",
  "AdInterestGroupAPI",
  "SharedStorageAPI",
  "FencedFrames",
  "BrowsingTopics",
  "PrivateAggregationApi",
];

/**
 * Features every launch turns on. Error pages of refused cross-site frames share one process
 * instead of one per refused site (isolation is not loosened: they hold no site's content).
 * The network service runs in the browser process: on Linux its own process is not sandboxed
 * (no seccomp, same user), so the process boundary bought nothing but ~20 MB per session;
 * the browser's network namespace is what confines it.
 */
export const ENABLED_FEATURES: readonly string[] = [
  "IsolateSubframeErrorPages",
  "NetworkServiceInProcess2",
];

/** Flags every launch gets; they keep Chromium from calling home or opening ports. */
export const HARDENED_ARGS: readonly string[] = [
  "--remote-debugging-pipe",
  "--headless",
  // Chromium's default on desktop, but not the headless shell's: a cross-site frame in a
  // renderer of its own, always, whichever build runs.
  "--site-per-process",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-extensions",
  "--disable-default-apps",
  "--disable-breakpad",
  "--disable-crash-reporter",
  // Without it Debian's build still starts two crashpad handlers per browser, reparented to
  // init (outside the browser's process tree) and able to write minidumps of page memory.
  "--disable-crashpad-for-testing",
  "--disable-domain-reliability",
  "--disable-client-side-phishing-detection",
  "--disable-hang-monitor",
  "--disable-dev-shm-usage",
  "--disable-gpu",
  "--disable-quic",
  "--metrics-recording-only",
  "--password-store=basic",
  "--use-mock-keychain",
  "--mute-audio",
  "--hide-scrollbars",
  "--no-service-autorun",
  `--disable-features=${DISABLED_FEATURES.join(",")}`,
  `--enable-features=${ENABLED_FEATURES.join(",")}`,
  // No software GL: 2D pages and screenshots do not need it, and the GPU process halves.
  "--disable-software-rasterizer",
  "--window-size=1280,900",
];

/** Options for `findBrowser()`. */
export interface FindBrowserOptions {
  /** A window is wanted: the headless shell cannot draw one. */
  headful?: boolean;
  /**
   * The full browser first, the headless shell only when it is all there is: an unguarded
   * control run, which must make every request the fuller build makes (a preconnect).
   */
  preferFull?: boolean;
  /** Whether a path exists (tests replace it). */
  exists?: (path: string) => boolean;
}

/**
 * Picks the browser executable: `OMOTAI_BROWSER`, then the first candidate that exists (the
 * headless shell first, unless a window is wanted).
 */
export function findBrowser(
  envValue: string | undefined,
  options: FindBrowserOptions = {},
): string {
  const exists = options.exists ?? fileExists;
  if (envValue) {
    if (!exists(envValue)) {
      throw new BrowserLaunchError(`OMOTAI_BROWSER points to ${envValue}, which does not exist`);
    }
    if (options.headful && isHeadlessShell(envValue)) {
      throw new BrowserLaunchError(
        `OMOTAI_BROWSER points to ${envValue}, a headless shell: a window needs a full browser`,
      );
    }
    return envValue;
  }
  const candidates = options.headful
    ? BROWSER_CANDIDATES
    : options.preferFull
    ? [...BROWSER_CANDIDATES, ...HEADLESS_SHELL_CANDIDATES]
    : [...HEADLESS_SHELL_CANDIDATES, ...BROWSER_CANDIDATES];
  for (const c of candidates) if (exists(c)) return c;
  throw new BrowserLaunchError(
    `no Chromium found (tried ${
      candidates.join(", ")
    }); install it with 'apt-get install chromium-headless-shell chromium' or set OMOTAI_BROWSER`,
  );
}

function fileExists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (err) {
    // Without read permission we cannot tell; let spawn decide.
    return !(err instanceof Deno.errors.NotFound);
  }
}

/** Whether this process runs as root, where Chromium's sandbox cannot start. */
export function runningAsRoot(): boolean {
  try {
    return Deno.uid() === 0;
  } catch {
    return false;
  }
}

/** Options for `launchBrowser()`. */
export interface LaunchOptions {
  executable: string;
  /** An existing, empty, private directory. */
  profileDir: string;
  /** Appended after the hardened flags. */
  extraArgs?: string[];
  /** Show a window (debugging only). */
  headful?: boolean;
  /** Bound for the first CDP round trip. */
  startTimeoutMs?: number;
  /**
   * Where the CDP layer logs its failures (codes only); default: nowhere. The runtime always
   * hands in its own `log()` (`runtime/browser/launch.ts`): `cdp/` never writes to stderr.
   */
  log?: CdpLog;
  /** Bytes one CDP message may have (default `MAX_MESSAGE_BYTES`): more ends the browser. */
  maxMessageBytes?: number;
  /**
   * How fast the browser's CDP bytes are read (default `CDP_BYTE_RATE`; `false`: unmetered,
   * a control only): past it the browser is slowed, then ended (`SESSION_FLOODING`).
   */
  byteRate?: ByteRateLimits | false;
  /** Runs the browser under a wrapper (a sandbox launcher) instead of directly. */
  wrap?: LaunchWrap;
  /**
   * Calls the launch off: before the spawn nothing starts; after it, the browser is killed and
   * the launch rejects at once instead of waiting out its first round trip (a runtime stopping
   * while a browser it no longer wants is starting).
   */
  signal?: AbortSignal;
}

/**
 * A command prefix the browser runs under: the process started is
 * `[...command, executable, ...flags]`, and it must pass on fds 3 and 4 (the CDP pipe), its
 * stderr and its environment. Killing the started process must end the browser.
 */
export interface LaunchWrap {
  command: readonly string[];
  /** The profile directory as the browser sees it (`--user-data-dir`, `HOME`), if elsewhere. */
  profileDir?: string;
  /**
   * Keep Chromium's sandbox on although this process is root: the wrapper runs the browser
   * as another, unprivileged user. Without it a root runtime adds `--no-sandbox` as before.
   */
  sandbox?: boolean;
  /** Variables the wrapper needs, set on top of the browser's own (the browser sees them too). */
  env?: Readonly<Record<string, string>>;
}

/** A running Chromium and its CDP connection. Dispose to stop it. */
export class BrowserProcess implements AsyncDisposable {
  readonly connection: CdpConnection;
  readonly profileDir: string;
  readonly pid: number | undefined;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  #child: ChildProcess;
  #hasExited = false;
  readonly #transport: { bytesRead: number; eventBytesRead: number } | undefined;

  /** `transport` counts what the browser sent on its pipe. */
  constructor(
    child: ChildProcess,
    connection: CdpConnection,
    profileDir: string,
    transport?: { bytesRead: number; eventBytesRead: number },
  ) {
    this.#child = child;
    this.#transport = transport;
    this.connection = connection;
    this.profileDir = profileDir;
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        this.#hasExited = true;
        resolve();
        return;
      }
      child.once("exit", () => {
        this.#hasExited = true;
        connection.close();
        resolve();
      });
    });
    // A connection the runtime ended (a message it could not take, a handler of its own that
    // failed) leaves a browser nobody can steer or trust to be in step: it goes at once.
    connection.onClose(() => {
      if (connection.fault) this.kill("SIGKILL");
    });
  }

  /** Bytes the browser has sent on its CDP pipe so far: all, and those of events. */
  get cdpBytesRead(): { all: number; events: number } {
    return { all: this.#transport?.bytesRead ?? 0, events: this.#transport?.eventBytesRead ?? 0 };
  }

  /** Whether the process has exited. */
  get hasExited(): boolean {
    return this.#hasExited;
  }

  /** Why the runtime ended this browser's connection (and killed it), if it did. */
  get fault(): CdpFaultError | undefined {
    return this.connection.fault;
  }

  /** Sends a signal (tests use it to simulate a crash). */
  kill(signal: "SIGTERM" | "SIGKILL" = "SIGKILL"): void {
    if (this.#hasExited) return;
    // Deno's child_process sends only the first signal of a child and ignores later ones
    // once `killed` is set, so a SIGKILL after an ignored SIGTERM would never leave (a
    // frozen browser survived the runtime). Killing by pid instead needs unscoped --allow-run.
    Object.defineProperty(this.#child, "killed", {
      value: false,
      writable: true,
      configurable: true,
    });
    try {
      this.#child.kill(signal);
    } catch {
      // Gone between the check and the signal.
    }
  }

  /** Stops the browser: polite `Browser.close`, then SIGTERM, then SIGKILL. */
  async close(graceMs = 2_000): Promise<void> {
    if (this.#hasExited) return;
    if (!this.connection.closed) {
      await this.connection.root.send("Browser.close", undefined, { timeoutMs: graceMs })
        .catch(() => {});
    }
    if (await this.#waitExit(graceMs)) return;
    this.kill("SIGTERM");
    if (await this.#waitExit(graceMs)) return;
    this.kill("SIGKILL");
    await this.#waitExit(graceMs);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #waitExit(ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
    const done = await Promise.race([this.exited.then(() => true as const), timeout]);
    clearTimeout(timer);
    return done;
  }
}

/** Starts Chromium on a private pipe and checks that it answers. */
export async function launchBrowser(options: LaunchOptions): Promise<BrowserProcess> {
  if (options.signal?.aborted) throw new BrowserLaunchError("the launch was called off");
  const args = [...HARDENED_ARGS];
  if (options.headful) args.splice(args.indexOf("--headless"), 1);
  if (runningAsRoot() && options.wrap?.sandbox !== true) args.push("--no-sandbox");
  const seenProfile = options.wrap?.profileDir ?? options.profileDir;
  args.push(`--user-data-dir=${seenProfile}`, ...(options.extraArgs ?? []), "about:blank");
  const [program, ...argv] = options.wrap
    ? [...options.wrap.command, options.executable, ...args]
    : [options.executable, ...args];
  let child: ChildProcess;
  try {
    child = spawn(program, argv, {
      stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
      detached: false,
      // A minimal environment: nothing of the runtime's (tokens, keys) reaches the browser,
      // and spawning needs no env permission.
      env: { ...browserEnv(seenProfile), ...options.wrap?.env },
    });
  } catch (err) {
    throw new BrowserLaunchError(`cannot start ${options.executable}: ${errorText(err)}`, {
      cause: err,
    });
  }
  const stderrTail: string[] = [];
  child.stderr?.on("data", (d: Uint8Array | string) => {
    stderrTail.push(String(d));
    if (stderrTail.length > 20) stderrTail.shift();
  });
  // An 'error' event nobody listens to is thrown, which would end the runtime: every
  // stream of the child and the child itself keep a listener for as long as they live.
  child.stderr?.on("error", () => {});
  const spawnError = new Promise<Error>((resolve) => child.on("error", resolve));
  const writable = child.stdio[3] as unknown as PipeWritable | null;
  const readable = child.stdio[4] as unknown as PipeReadable | null;
  if (!writable || !readable) {
    child.kill("SIGKILL");
    throw new BrowserLaunchError("the runtime could not open the CDP pipe to the browser");
  }
  const transport = new PipeTransport(writable, readable, {
    log: options.log,
    maxMessageBytes: options.maxMessageBytes,
    byteRate: options.byteRate,
  });
  const connection = new CdpConnection(transport, { log: options.log });
  const browser = new BrowserProcess(
    child,
    connection,
    options.profileDir,
    transport,
  );
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  let onAbort = () => {};
  const calledOff = new Promise<never>((_, reject) => {
    onAbort = () => reject(new BrowserLaunchError("the launch was called off"));
  });
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await Promise.race([
      connection.root.send("Browser.getVersion", undefined, { timeoutMs }),
      spawnError.then((e) => Promise.reject(e)),
      calledOff,
    ]);
    if (!outcome.product) throw new BrowserLaunchError("empty Browser.getVersion reply");
  } catch (err) {
    await browser.close(500);
    const detail = stderrTail.join("").trim().split("\n").slice(-3).join(" | ");
    throw new BrowserLaunchError(
      `browser ${options.executable} did not start: ${errorText(err)}${
        detail ? ` (stderr: ${detail})` : ""
      }`,
      { cause: err },
    );
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  return browser;
}

/** The environment Chromium runs with: only what it needs, HOME inside its private profile. */
export function browserEnv(profileDir: string): Record<string, string> {
  return {
    HOME: profileDir,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    LANG: "C.UTF-8",
    XDG_CONFIG_HOME: `${profileDir}/.config`,
    XDG_CACHE_HOME: `${profileDir}/.cache`,
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
