/**
 * The one way back from a hang: run whenever a call ended by a timeout, a renderer that stopped
 * answering or one that crashed. Each rung is bounded and audited with its reason, and the
 * next is taken only when the one before did not do:
 *
 * 1. the tab is closed: its renderer crashed from the IO thread (`Page.crash`, which answers
 *    whatever the main thread does) and the tab closed (`Target.closeTarget`);
 * 2. a tab that does not go has its renderer killed by pid (`renderer_pids.ts`): the one that
 *    spent the CPU meanwhile, or every renderer of the browser when none stands out;
 * 3. a browser that does not answer (`Browser.getVersion`), or whose tab still will not go,
 *    is replaced: the session kills it and the next call starts a fresh one.
 *
 * Recovery takes at most about {@link RECOVERY_BOUND_MS}: with the next call's launch and
 * load, a session answers again well within 30 s of the hung call's end.
 *
 * @module
 */
import type { TrackedTarget } from "../../cdp/mod.ts";
import { log } from "../mod.ts";
import type { Live } from "./live.ts";
import { readRendererCpu, type RendererCpu } from "./renderer_cpu.ts";
import { hostPids, killPid } from "./renderer_pids.ts";
import { withinMs } from "./within_ms.ts";

/** How long a tab is given to close once asked. */
export const CLOSE_WAIT_MS = 4_000;
/** How long a killed renderer's tab is given to go. */
export const KILL_WAIT_MS = 3_000;
/** How long the browser is given to answer a trivial call before it is replaced. */
export const ROOT_PROBE_MS = 3_000;
/** How long the browser is given to say what its renderers spent. */
const CPU_READ_MS = 2_000;
/** CPU seconds over the close wait that single out one renderer as the culprit. */
const CULPRIT_CPU_S = 0.5;
/** The most one recovery takes, every rung taken. */
export const RECOVERY_BOUND_MS = CPU_READ_MS * 3 + CLOSE_WAIT_MS + KILL_WAIT_MS +
  ROOT_PROBE_MS + 2_000;

/** Why a recovery ran (the reason of its audit rows). */
export type HangReason =
  | "CALL_TIMEOUT"
  | "RENDERER_SPINNING"
  | "RENDERER_STUCK"
  | "RENDERER_CRASHED";

/** What a recovery did. */
export interface RecoveryOutcome {
  /** The tab went (closed, or its renderer killed). */
  closed: boolean;
  /** Renderer processes killed by pid. */
  killed: number;
  /** The browser was replaced: the next call starts a fresh one. */
  replaced: boolean;
}

/** What a recovery needs from its session. */
export interface RecoveryDeps {
  live: Live;
  /** Appends a lifecycle audit row (never throws). */
  lifecycle(kind: string, reason?: string): void;
  /** Ends this browser; the session's next call starts a fresh one (audited, told). */
  replaceBrowser(reason: string): void;
}

/**
 * Recovers from a hang on `tab` (or, without one, of the browser itself): closes the tab,
 * kills its renderer if it does not go, replaces the browser if that does not answer.
 */
export async function recoverHang(
  deps: RecoveryDeps,
  tab: TrackedTarget | undefined,
  reason: HangReason,
): Promise<RecoveryOutcome> {
  const { live } = deps;
  const root = live.browser.connection.root;
  const outcome: RecoveryOutcome = { closed: false, killed: 0, replaced: false };
  if (tab && !tab.session.detached) {
    const before = await readRendererCpu(root, CPU_READ_MS);
    const detached = new Promise<void>((r) => tab.session.onDetach(r));
    tab.session.send("Page.crash", undefined, { timeoutMs: CLOSE_WAIT_MS }).catch(() => {});
    root.send("Target.closeTarget", { targetId: tab.info.targetId }, { timeoutMs: CLOSE_WAIT_MS })
      .catch(() => {});
    outcome.closed = await settles(detached, CLOSE_WAIT_MS);
    if (outcome.closed) deps.lifecycle("hang_tab_closed", reason);
    else {
      outcome.killed = await killRenderers(live, before);
      deps.lifecycle("renderer_killed", `${reason}:${outcome.killed}`);
      outcome.closed = await settles(detached, KILL_WAIT_MS);
    }
  }
  const answers = await root.send("Browser.getVersion", undefined, { timeoutMs: ROOT_PROBE_MS })
    .then(() => true, () => false);
  if (!answers || (tab && !outcome.closed)) {
    deps.replaceBrowser(answers ? "TAB_WOULD_NOT_CLOSE" : "BROWSER_UNRESPONSIVE");
    outcome.replaced = true;
  }
  return outcome;
}

/**
 * Kills the renderer that spent the most CPU since `before` (a spinning page's), or every
 * renderer of the browser when none stands out (a stopped one spends nothing); returns how
 * many were signalled. The browser must still say which processes are its renderers.
 */
async function killRenderers(live: Live, before: RendererCpu | undefined): Promise<number> {
  const root = live.browser.connection.root;
  const rootPid = live.browser.pid;
  let info;
  try {
    info = (await root.send("SystemInfo.getProcessInfo", undefined, { timeoutMs: CPU_READ_MS }))
      .processInfo;
  } catch {
    return 0;
  }
  const self = info.find((p) => p.type === "browser");
  if (rootPid === undefined || !self) return 0;
  const after = new Map(
    info.filter((p) => p.type === "renderer").map((p) => [p.id, p.cpuTime] as const),
  );
  let targets = [...after.keys()];
  if (before) {
    const spent = (pid: number) => (after.get(pid) ?? 0) - (before.get(pid) ?? 0);
    const busiest = targets.sort((a, b) => spent(b) - spent(a))[0];
    if (busiest !== undefined && spent(busiest) >= CULPRIT_CPU_S) targets = [busiest];
  }
  const pids = await hostPids(rootPid, self.id, targets).catch(() => new Map<number, number>());
  let killed = 0;
  for (const host of pids.values()) if (await killPid(host)) killed++;
  log(`hang recovery: killed ${killed} of ${targets.length} renderer(s)`);
  return killed;
}

/** Whether `p` settles within `ms` (a rejection passes through). */
async function settles(p: Promise<unknown>, ms: number): Promise<boolean> {
  return (await withinMs(p.then(() => true as const), ms)) ?? false;
}
