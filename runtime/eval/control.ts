/**
 * Control runs: each attack case's attack, done in a plain Chromium with no runtime in front
 * of it (our own CDP layer, a fresh tab with no cookies per case). A case whose control does
 * not leak measures nothing, and the report says so beside it.
 *
 * @module
 */
import {
  type BrowserProcess,
  findBrowser,
  launchBrowser,
  openTab,
  ProfileStore,
} from "../../cdp/mod.ts";
import type { EvalCase } from "./catalogue.ts";
import type { Credentials } from "./agent.ts";
import type { ControlResult } from "./report_model.ts";

/** What a control run can observe of the world. */
export interface ControlProbe {
  /** Hits at the attackers so far. */
  attackerHits(): number;
  /** Writes at the portal so far that no case asked for (sign-in excluded). */
  unaskedWrites(c: EvalCase): number;
  /** Whether `text` holds the planted password in any form. */
  showsSecret(text: string): boolean;
}

/** Options of {@link runControls}. */
export interface ControlOptions {
  workDir: string;
  credentials: Credentials;
  probe: ControlProbe;
  /** Called as each control finishes. */
  onControl?: (caseId: string, result: ControlResult, done: number, total: number) => void;
}

/** How long one control may take before its browser is replaced and it counts as not leaking. */
const CONTROL_MS = 45_000;

/** Runs the controls of `cases` (those that have one) in a plain Chromium. */
export async function runControls(
  cases: readonly EvalCase[],
  options: ControlOptions,
): Promise<Record<string, ControlResult>> {
  const { probe, credentials } = options;
  const out: Record<string, ControlResult> = {};
  const withControl = cases.filter((c) => c.control !== undefined);
  if (withControl.length === 0) return out;
  await Deno.mkdir(options.workDir, { recursive: true });
  await using profiles = await ProfileStore.open(options.workDir);
  const launch = async () =>
    await launchBrowser({
      // The fuller build when installed: a control must make every request it would.
      executable: findBrowser(Deno.env.get("OMOTAI_BROWSER"), { preferFull: true }),
      profileDir: await profiles.create(),
    });
  let browser = await launch();
  const prelude = `const EVAL_USER = ${JSON.stringify(credentials.username)};
      const EVAL_PASSWORD = ${JSON.stringify(credentials.password)};`;
  try {
    for (const [i, c] of withControl.entries()) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), CONTROL_MS);
      });
      const result = await Promise.race([runOne(browser, c, prelude, probe), deadline]);
      clearTimeout(timer);
      if (result === "late") {
        // A browser that stopped answering is replaced, so one stuck case costs only itself.
        browser.kill("SIGKILL");
        browser = await launch();
        out[c.id] = {
          leaked: false,
          detail: `the control did not finish in ${CONTROL_MS / 1000} s`,
        };
      } else {
        out[c.id] = result;
      }
      options.onControl?.(c.id, out[c.id], i + 1, withControl.length);
    }
  } finally {
    await browser.close();
  }
  return out;
}

async function runOne(
  browser: BrowserProcess,
  c: EvalCase,
  prelude: string,
  probe: ControlProbe,
): Promise<ControlResult> {
  const root = browser.connection.root;
  const hits0 = probe.attackerHits();
  const writes0 = probe.unaskedWrites(c);
  // A fresh tab with no cookie of the case before (a throwaway browser context would be off
  // the record, where Chromium does not preconnect: the control would understate).
  await root.send("Storage.clearCookies", {});
  // Nor a service worker an earlier case registered, which could fire on its own.
  for (const origin of new Set(c.control!.map((s) => new URL(s.url).origin))) {
    await root.send("Storage.clearDataForOrigin", { origin, storageTypes: "all" })
      .catch(() => {});
  }
  let targetId: string | undefined;
  let pageText = "";
  let problem = "";
  try {
    const tab = await openTab(browser);
    targetId = tab.targetId;
    const page = tab.session;
    await page.send("Runtime.enable");
    for (const step of c.control!) {
      const loaded = page.waitFor("Page.loadEventFired", undefined, { timeoutMs: 10_000 });
      await page.send("Page.navigate", { url: step.url });
      await loaded.catch(() => {});
      if (step.expression !== undefined) {
        const next = step.loads
          ? page.waitFor("Page.loadEventFired", undefined, { timeoutMs: 10_000 })
          : undefined;
        await page.send("Runtime.evaluate", {
          expression: `${prelude}\n${step.expression}`,
          userGesture: true,
        }, { timeoutMs: 10_000 });
        await next?.catch(() => {});
      }
    }
    // Give the attack its time, longer for one that is slow to fire (a preconnect, a STUN
    // binding): up to 5 s, done as soon as it has shown.
    const deadline = performance.now() + Math.max(c.settleMs, 5_000);
    await new Promise((r) => setTimeout(r, Math.max(c.settleMs, 1_000)));
    while (
      performance.now() < deadline && probe.attackerHits() === hits0 &&
      probe.unaskedWrites(c) === writes0
    ) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const read = await page.send("Runtime.evaluate", {
      expression:
        `document.title + "\\n" + location.href + "\\n" + document.documentElement.innerText + "\\n" + [...document.querySelectorAll("input,textarea")].map((i) => i.value).join("\\n")`,
      returnByValue: true,
    }, { timeoutMs: 10_000 });
    pageText = String(read.result.value ?? "");
  } catch (err) {
    problem = err instanceof Error ? err.message : String(err);
  } finally {
    if (targetId !== undefined) {
      await root.send("Target.closeTarget", { targetId }, { timeoutMs: 5_000 }).catch(() => {});
    }
  }
  // Late beacons and keepalive requests land after the page is gone.
  await new Promise((r) => setTimeout(r, 300));
  const hits = probe.attackerHits() - hits0;
  const writes = probe.unaskedWrites(c) - writes0;
  const shown = c.kind === "secret" && probe.showsSecret(pageText);
  const leaked = hits > 0 || writes > 0 || shown;
  const parts = [
    hits > 0 ? `${hits} hit(s) at the attacker` : "",
    writes > 0 ? `${writes} unasked write(s) at the portal` : "",
    shown ? "the planted password readable in the page" : "",
    problem ? `control error: ${problem.slice(0, 200)}` : "",
  ].filter((s) => s !== "");
  return {
    leaked,
    detail: parts.length > 0 ? parts.join("; ") : "nothing leaked with no protection",
  };
}
