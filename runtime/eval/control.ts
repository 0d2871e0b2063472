/**
 * Control runs: each attack case's attack, done in a plain Chromium with no runtime in front
 * of it (our own CDP layer, a fresh tab with no cookies per case). A case whose control does not
 * leak measures nothing, and the report says so beside it.
 *
 * @module
 */
import { findBrowser, launchBrowser, ProfileStore } from "../../cdp/mod.ts";
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

/** Runs the controls of `cases` (those that have one) in one plain Chromium. */
export async function runControls(
  cases: readonly EvalCase[],
  options: { workDir: string; credentials: Credentials; probe: ControlProbe },
): Promise<Record<string, ControlResult>> {
  const { probe, credentials } = options;
  const out: Record<string, ControlResult> = {};
  const withControl = cases.filter((c) => c.control !== undefined);
  if (withControl.length === 0) return out;
  await Deno.mkdir(options.workDir, { recursive: true });
  await using profiles = await ProfileStore.open(options.workDir);
  const browser = await launchBrowser({
    executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    profileDir: await profiles.create(),
  });
  try {
    const root = browser.connection.root;
    const prelude = `const EVAL_USER = ${JSON.stringify(credentials.username)};
      const EVAL_PASSWORD = ${JSON.stringify(credentials.password)};`;
    for (const c of withControl) {
      const hits0 = probe.attackerHits();
      const writes0 = probe.unaskedWrites(c);
      // A fresh tab with no cookie of the case before (a throwaway browser context would be
      // off the record, where Chromium does not preconnect: the control would understate).
      await root.send("Storage.clearCookies", {});
      // Nor a service worker an earlier case registered, which could fire on its own.
      for (const origin of new Set(c.control!.map((s) => new URL(s.url).origin))) {
        await root.send("Storage.clearDataForOrigin", { origin, storageTypes: "all" })
          .catch(() => {});
      }
      const { targetId } = await root.send("Target.createTarget", { url: "about:blank" });
      const { sessionId } = await root.send("Target.attachToTarget", { targetId, flatten: true });
      const page = browser.connection.session(sessionId)!;
      let pageText = "";
      let problem = "";
      try {
        await page.send("Page.enable");
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
            });
            await next?.catch(() => {});
          }
        }
        // Give the attack its time, longer for one that is slow to fire (a preconnect, a
        // STUN binding): up to 5 s, done as soon as it has shown.
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
        });
        pageText = String(read.result.value ?? "");
      } catch (err) {
        problem = err instanceof Error ? err.message : String(err);
      } finally {
        await root.send("Target.closeTarget", { targetId }).catch(() => {});
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
      out[c.id] = {
        leaked,
        detail: parts.length > 0 ? parts.join("; ") : "nothing leaked with no protection",
      };
    }
  } finally {
    await browser.close();
  }
  return out;
}
