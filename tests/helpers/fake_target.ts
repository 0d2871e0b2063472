/**
 * Targets for unit tests of target watchers: real `CdpSession`s over a fake connection that
 * records every command instead of sending it.
 *
 * @module
 */
import type { Protocol, TrackedTarget } from "../../cdp/mod.ts";
import { CdpSession, type SessionHost } from "../../cdp/session.ts";

/** A CDP connection stand-in: records every command, answers `{}` (or rejects if failing). */
export class FakeHost implements SessionHost {
  calls: { sessionId: string | undefined; method: string; params: unknown }[] = [];
  /** Methods whose commands reject. */
  failing: Set<string> = new Set<string>();
  #waiters: { methods: readonly string[]; resolve: () => void }[] = [];

  sendRaw(sessionId: string | undefined, method: string, params: unknown): Promise<unknown> {
    this.calls.push({ sessionId, method, params });
    const [hit, rest] = [
      this.#waiters.filter((w) => w.methods.includes(method)),
      this.#waiters.filter((w) => !w.methods.includes(method)),
    ];
    this.#waiters = rest;
    for (const w of hit) w.resolve();
    return this.failing.has(method)
      ? Promise.reject(new Error(`${method} failed`))
      : Promise.resolve({});
  }

  /** Resolves at the next command among `methods` (bounded). */
  next(...methods: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${methods} within 5 s`)), 5_000);
      this.#waiters.push({
        methods,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** The methods sent so far, in order (only those of `sessionId` when given). */
  methods(sessionId?: string): string[] {
    return this.calls.filter((c) => sessionId === undefined || c.sessionId === sessionId)
      .map((c) => c.method);
  }
}

/** An attached target's info. */
export function targetInfo(
  type: string,
  id: string,
  url = "https://portal.test/",
): Protocol.Target.TargetInfo {
  return { targetId: id, type, title: "", url, attached: true, canAccessOpener: false };
}

/** A target of `type` with a real `CdpSession` `session-<id>` (a child of `parent` when given). */
export function fakeTarget(
  host: FakeHost,
  type: string,
  id: string,
  parent?: CdpSession,
): { target: TrackedTarget; session: CdpSession } {
  const info = targetInfo(type, id);
  const session = new CdpSession(host, `session-${id}`, info, parent);
  return { target: { session, info, seq: 1 }, session };
}
