/**
 * How this runtime starts browsers, put together once: the executable, the sandbox, a lower
 * CPU priority (`nice`), launches and page loads admitted a few at a time (`Admission`), and
 * the pool of browsers started ahead of their sessions. Sessions and the pool launch through the same recipe.
 *
 * @module
 */
import { type ByteRateLimits, describeError, type ProfileStore } from "../../cdp/mod.ts";
import {
  type Admission,
  type BrowserStart,
  defaultPoolSize,
  launchAdmission,
  type LaunchGroups,
  type LaunchIsolation,
  loadAdmission,
  startBrowser,
  WarmPool,
} from "../browser/mod.ts";
import type { AuditSink } from "../store/mod.ts";
import { type EgressProxy, warmEgress } from "../egress/mod.ts";
import { findNice } from "../isolation/mod.ts";
import { log } from "../mod.ts";
import type { Teardown } from "./teardown.ts";

/** What the recipe is made of. */
export interface BrowserStartParts {
  profiles: ProfileStore;
  executable: string;
  headful?: boolean;
  isolation?: LaunchIsolation;
  /** A cgroup per browser. */
  groups?: LaunchGroups;
  /** How fast each browser's CDP events are read (the runtime policy's `limits`). */
  cdpByteRate?: ByteRateLimits;
  /** Refuses a browser that is not the pinned build, before each launch. */
  verifyExecutable?: () => Promise<void>;
}

/**
 * The recipe every browser of this runtime is started with, and the admission of its
 * sessions' page loads. Both admissions are on the teardown: whoever still waits for a turn
 * then is refused.
 */
export function browserStart(
  parts: BrowserStartParts,
  teardown: Teardown,
): BrowserStart & { loads: Admission } {
  const nice = findNice();
  if (!nice) log("browsers run at the runtime's CPU priority: nice was not found");
  const cores = navigator.hardwareConcurrency ?? 1;
  const launches = launchAdmission(cores);
  const loads = loadAdmission(cores);
  teardown.defer("admission", () => {
    launches[Symbol.dispose]();
    loads[Symbol.dispose]();
  });
  return { ...parts, nice, launches, loads };
}

/**
 * The pool of warm browsers (`size`; default by the machine's cores), on the teardown; it
 * starts filling at once, in the background. What they send before a session takes them is
 * refused and audited to `egress.audit`. None when the size is 0. In stdio mode (one
 * session) at most one, not replaced once taken.
 */
export function openWarmPool(
  start: BrowserStart,
  egress: { proxy: EgressProxy; audit: AuditSink },
  options: { size?: number; mode: "stdio" | "sse" },
  teardown: Teardown,
): WarmPool | undefined {
  const { proxy, audit } = egress;
  const stdio = options.mode === "stdio";
  const n = Math.min(
    options.size ?? defaultPoolSize(navigator.hardwareConcurrency ?? 1),
    stdio ? 1 : Infinity,
  );
  if (n <= 0) return undefined;
  const pool = new WarmPool({
    size: n,
    refill: !stdio,
    start: async (signal) => {
      return await startBrowser(
        { ...start, log: (line) => log(`warm browser: cdp: ${line}`) },
        () => warmEgress(proxy, audit),
        signal,
      );
    },
    log,
  });
  teardown.defer("warm browsers", () => pool[Symbol.asyncDispose]());
  pool.fill().catch((err) => log(`warm pool: ${describeError(err)}`));
  return pool;
}
