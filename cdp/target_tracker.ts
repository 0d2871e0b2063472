/**
 * Attaches to every target the browser creates (pages, popups, iframes including
 * out-of-process ones, dedicated/shared/service workers) while each is paused at start,
 * runs the owner's setup hook on it, and only then lets it run. This is the seam where
 * request interception is installed before a target's first request.
 *
 * @module
 */
import type { CdpConnection } from "./connection.ts";
import type { CdpSession } from "./session.ts";
import type { Protocol } from "./types.ts";

/** A target the tracker is attached to. */
export interface TrackedTarget {
  readonly session: CdpSession;
  /** Latest info (url and title change as the target navigates). */
  info: Protocol.Target.TargetInfo;
  /** Monotonic attach order, for stable tab numbering. */
  readonly seq: number;
}

/**
 * Runs on every new target while it is paused. The hook must *send* all its setup commands
 * before its first `await`: the tracker sends `Runtime.runIfWaitingForDebugger` right after
 * the hook returns, and CDP applies a session's commands in order, so the setup takes
 * effect before the target runs even though some replies (e.g. `Page.enable` on a popup)
 * only arrive once it runs. The resume cannot wait for the replies (a popup's would never
 * come), so a hook that rejects or times out does so about a target that may already have
 * run: it is closed, and keeps counting for the admit hook until Chromium says it is gone.
 */
export type AttachHook = (target: TrackedTarget) => Promise<void>;

/**
 * Asked of every new target while it is paused, before the setup hook: true lets it run;
 * false refuses it (it is let go only with script off and its requests failed, then closed: it
 * runs no script and sends no request); `"hold"` keeps it paused, not tracked, until the hook,
 * asked again each time a tracked target goes, lets it run or refuses it (held targets in
 * attach order; one still held keeps those after it waiting), or its session ends (its page
 * left). `tracked` is every target already tracked, those still in setup included, and those
 * whose setup failed until Chromium says they are gone (they were resumed with their setup and
 * may be running), so a count taken there misses none that may run. Held ones are not in it.
 */
export type AdmitHook = (
  target: TrackedTarget,
  tracked: readonly TrackedTarget[],
) => boolean | "hold";

/** What `TargetTracker.start` takes besides the connection. */
export interface TrackerOptions {
  /** Runs on every admitted target while it is paused (see {@link AttachHook}). */
  hook?: AttachHook;
  /** Decides whether a new target may run at all (see {@link AdmitHook}); default: all. */
  admit?: AdmitHook;
  /**
   * How long a refused target is kept, its requests failed, waiting for its first request
   * before it is closed anyway (default {@link REFUSE_WAIT_MS}).
   */
  refuseWaitMs?: number;
}

/**
 * How long a refused target waits for its first request (its document's, failed where it is
 * held) before it is closed without one: a page opened without a URL makes none.
 */
export const REFUSE_WAIT_MS = 10_000;

/**
 * What `TargetTracker.onChange` reports; `refused`: a target the admit hook turned away,
 * closed (see {@link AdmitHook}) and never tracked; `held`: one it keeps paused for now.
 */
export type TargetEvent = "attached" | "detached" | "changed" | "failed" | "refused" | "held";

/** Target types the runtime never drives (browser chrome, internal pages). */
const IGNORED_TYPES = new Set(["browser", "tab", "browser_ui", "webview", "auction_worklet"]);
/** Types whose own children (iframes, nested workers) must be auto-attached too. */
const NESTING_TYPES = new Set(["page", "iframe", "worker", "shared_worker", "service_worker"]);

const AUTO_ATTACH = { autoAttach: true, waitForDebuggerOnStart: true, flatten: true } as const;

/** Keeps the set of attached targets of one browser. */
export class TargetTracker {
  #connection: CdpConnection;
  #targets = new Map<string, TrackedTarget>();
  /**
   * Targets whose setup failed, being closed: no longer listed, but resumed with their setup,
   * so they may be running. Kept (and counted by `#admit`) until their session detaches.
   */
  #closing = new Map<string, TrackedTarget>();
  /** Targets the admit hook holds, paused and untracked, in attach order. */
  #held = new Map<string, TrackedTarget>();
  #hook: AttachHook;
  #admit: AdmitHook;
  #refuseWaitMs: number;
  #seq = 0;
  #listeners = new Set<(event: TargetEvent, t: TrackedTarget) => void>();

  private constructor(connection: CdpConnection, options: TrackerOptions) {
    this.#connection = connection;
    this.#hook = options.hook ?? (async () => {});
    this.#admit = options.admit ?? (() => true);
    this.#refuseWaitMs = options.refuseWaitMs ?? REFUSE_WAIT_MS;
  }

  /**
   * Starts tracking: discovers targets and auto-attaches recursively with pause-on-start.
   * `options` may be the setup hook alone.
   */
  static async start(
    connection: CdpConnection,
    options: AttachHook | TrackerOptions = {},
  ): Promise<TargetTracker> {
    const tracker = new TargetTracker(
      connection,
      typeof options === "function" ? { hook: options } : options,
    );
    const root = connection.root;
    root.on("Target.attachedToTarget", (e) => tracker.#onAttached(e));
    root.on("Target.detachedFromTarget", (e) => tracker.#onDetached(e.sessionId));
    root.on("Target.targetInfoChanged", (e) => tracker.#onInfoChanged(e.targetInfo));
    await root.send("Target.setDiscoverTargets", { discover: true });
    await root.send("Target.setAutoAttach", { ...AUTO_ATTACH });
    return tracker;
  }

  /** Every attached target, in attach order. */
  targets(): TrackedTarget[] {
    return [...this.#targets.values()].sort((a, b) => a.seq - b.seq);
  }

  /** The attached target with this id. */
  get(targetId: string): TrackedTarget | undefined {
    return this.#targets.get(targetId);
  }

  /**
   * Subscribes to attach/detach/change notifications, and to `failed`: a target whose setup
   * failed, which the tracker closed rather than let it run unprepared.
   */
  onChange(
    listener: (event: TargetEvent, t: TrackedTarget) => void,
  ): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async #onAttached(e: Protocol.Target.AttachedToTargetEvent): Promise<void> {
    const session = this.#connection.session(e.sessionId);
    if (!session) return;
    const info = e.targetInfo;
    if (IGNORED_TYPES.has(info.type)) {
      await session.send("Runtime.runIfWaitingForDebugger").catch(() => {});
      await this.#connection.root.send("Target.detachFromTarget", { sessionId: e.sessionId })
        .catch(() => {});
      return;
    }
    const target: TrackedTarget = { session, info, seq: this.#seq++ };
    const admitted = this.#ask(target);
    if (admitted === "hold") {
      this.#held.set(info.targetId, target);
      session.onDetach(() => this.#held.delete(info.targetId));
      this.#emit("held", target);
      return;
    }
    await this.#run(target, admitted);
  }

  /** The admit hook's verdict; one that throws refuses. */
  #ask(target: TrackedTarget): boolean | "hold" {
    try {
      return this.#admit(target, [...this.targets(), ...this.#closing.values()]);
    } catch (err) {
      this.#connection.log(`admitting a ${target.info.type} target failed: ${errorCode(err)}`);
      return false;
    }
  }

  /**
   * Asks again for the held targets, in attach order, once a tracked one went: each let run
   * is tracked before the next is asked (it counts), and the first still held keeps the rest.
   */
  #admitHeld(): void {
    for (const target of [...this.#held.values()]) {
      if (target.session.detached) {
        this.#held.delete(target.info.targetId);
        continue;
      }
      const admitted = this.#ask(target);
      if (admitted === "hold") return;
      this.#held.delete(target.info.targetId);
      // Tracked synchronously by #run before its first await: the next ask counts it.
      this.#run(target, admitted).catch((err) =>
        this.#connection.log(`a held ${target.info.type} target: ${errorCode(err)}`)
      );
    }
  }

  /** Runs an admitted target's setup and resumes it, or refuses it. */
  async #run(target: TrackedTarget, admitted: boolean): Promise<void> {
    const { session, info } = target;
    if (!admitted) {
      await this.#refuse(target);
      this.#emit("refused", target);
      return;
    }
    this.#targets.set(info.targetId, target);
    session.on("Target.attachedToTarget", (child) => this.#onAttached(child));
    session.on("Target.detachedFromTarget", (child) => this.#onDetached(child.sessionId));
    session.onDetach(() => this.#forget(info.targetId, session));
    try {
      const nesting = NESTING_TYPES.has(info.type)
        ? session.send("Target.setAutoAttach", AUTO_ATTACH).then(() => {})
        : Promise.resolve();
      // A hook that throws at once fails the setup like one that rejects; what was sent
      // before it stays awaited. Its commands go before the resume, never after.
      let hooked: Promise<void>;
      try {
        hooked = this.#hook(target);
      } catch (err) {
        hooked = Promise.reject(err);
      }
      const setup = [nesting, hooked];
      const resume = session.send("Runtime.runIfWaitingForDebugger");
      await Promise.all([...setup, resume]);
      this.#emit("attached", target);
    } catch (err) {
      if (session.detached) return;
      // A target we could not prepare is closed, and no longer listed while Chromium takes
      // its time to say it is gone. It was resumed with its setup (a timeout says nothing of
      // whether it ran), so it still holds its place against the admit hook until then: a
      // slot freed here would let one more of its opener's new targets run (a flood of
      // popups past the tab cap, each setup timing out on a loaded machine).
      this.#targets.delete(info.targetId);
      this.#closing.set(info.targetId, target);
      this.#connection.log(
        `closing a ${info.type} target that failed setup: ${errorCode(err)}; ` +
          `it counts as open until it is gone`,
      );
      await this.#connection.root.send("Target.closeTarget", { targetId: info.targetId })
        .catch(() => {});
      this.#emit("failed", target);
    }
  }

  /**
   * Closes a target before anything of it runs. It cannot simply be closed while paused: a
   * new page shares its opener's renderer, whose main thread waits with it, and stays
   * waiting once the target is gone (the opener would hang). So every request of the target
   * is held where it would leave (`Fetch`) and script is off before it is resumed; each
   * request held is failed, and the target is closed once its first one was (or, making none,
   * after `refuseWaitMs`): it runs no script and no request of it reaches the network.
   * Held is not enough: closing the target detaches this session, and Chromium lets a request
   * still held go on when its interception goes with the session (a refused popup's document
   * request, held as it was closed, reached the site on a loaded machine).
   */
  async #refuse(target: TrackedTarget): Promise<void> {
    const { session, info } = target;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const firstFailed = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#refuseWaitMs);
      session.onDetach(resolve);
      session.on("Fetch.requestPaused", (e) => {
        session.send("Fetch.failRequest", {
          requestId: e.requestId,
          errorReason: "BlockedByClient",
        })
          .catch(() => {}).then(resolve);
      });
    });
    // Sent in order before the resume; CDP applies a session's commands in order. Settled
    // at once: one that fails (a session already gone) is no unhandled rejection while the
    // first request is awaited; the target is closed all the same.
    const sent = Promise.allSettled([
      session.send("Fetch.enable", { patterns: [{ urlPattern: "*" }] }),
      session.send("Emulation.setScriptExecutionDisabled", { value: true }),
      session.send("Runtime.runIfWaitingForDebugger"),
    ]);
    await firstFailed;
    clearTimeout(timer);
    await this.#connection.root.send("Target.closeTarget", { targetId: info.targetId })
      .catch(() => {});
    await sent;
  }

  #onDetached(sessionId: string): void {
    for (const t of this.#targets.values()) {
      if (t.session.id === sessionId) this.#forget(t.info.targetId, t.session);
    }
  }

  #forget(targetId: string, session: CdpSession): void {
    // A target that failed setup is gone at last: its place is free again.
    const failed = this.#closing.get(targetId);
    if (failed?.session === session) {
      this.#closing.delete(targetId);
      this.#connection.log(
        `a ${failed.info.type} target that failed setup is gone; its place is free`,
      );
      if (this.#held.size > 0) this.#admitHeld();
    }
    const t = this.#targets.get(targetId);
    if (!t || t.session !== session) return;
    this.#targets.delete(targetId);
    this.#emit("detached", t);
    // Its place is free: a held target may run now.
    if (this.#held.size > 0) this.#admitHeld();
  }

  #onInfoChanged(info: Protocol.Target.TargetInfo): void {
    const t = this.#targets.get(info.targetId);
    if (!t) return;
    t.info = info;
    this.#emit("changed", t);
  }

  #emit(event: TargetEvent, t: TrackedTarget): void {
    for (const l of [...this.#listeners]) {
      // A listener's failure leaves its owner's view of the targets wrong (a tab list that
      // missed a tab): the connection ends this browser for it, and only this one.
      try {
        const out: unknown = l(event, t);
        if (out instanceof Promise) {
          out.catch((err) => this.#connection.listenerFailed("target listener", err));
        }
      } catch (err) {
        this.#connection.listenerFailed("target listener", err);
      }
    }
  }
}

/** An error's code or name: never its message, which may carry a URL. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return err instanceof Error ? err.name : typeof err;
}
