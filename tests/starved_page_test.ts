/**
 * A page that waits for the CPU is not a page that spins (issue 22, item 1). On a busy
 * machine a healthy renderer can leave probes unanswered for longer than a loop takes to be
 * caught; only a renderer that spends the CPU while silent is closed. The starved page here
 * is the limiting case: its renderers are stopped (SIGSTOP), so they get no CPU at all, for
 * longer than a loop is given, while another session's page spins.
 */
import assert from "node:assert/strict";
import { refOf, startHarness } from "./helpers/harness.ts";
import { descendants, processes } from "./helpers/processes.ts";
import { serveWedgeSite } from "./fixtures/wedge_site.ts";

/**
 * The renderer processes of the browsers whose profiles are in `dataDir`. Test files run in
 * parallel in this one process: only the profile path tells this runtime's browsers apart.
 */
function renderers(dataDir: string): number[] {
  const all = processes();
  const browsers = descendants(Deno.pid, all).filter((p) =>
    p.argv.some((a) => a.startsWith(`--user-data-dir=${dataDir}/`))
  );
  // Chromium rewrites a child's command line into one string: look for the flag in it.
  return browsers.flatMap((b) => descendants(b.pid, all))
    .filter((p) => p.argv.join(" ").includes(" --type=renderer")).map((p) => p.pid);
}

Deno.test("a starved page is waited for while a spinning one is closed (PAGE_UNRESPONSIVE)", async () => {
  const site = serveWedgeSite();
  await using h = await startHarness(() => `allowed_origins: [${site.origin}]\n`);
  try {
    const starved = await h.connect();
    const home = await starved.call("browser_navigate", { url: `${site.origin}/` });
    assert.match(home.text, /# Safe page/);
    const stopped = renderers(h.dataDir);
    assert.ok(stopped.length > 0, "the session's renderers are found");
    const STOP_MS = 14_000; // longer than a loop takes to be caught on an idle machine
    for (const pid of stopped) Deno.kill(pid, "SIGSTOP");
    const resume = setTimeout(() => {
      for (const pid of stopped) {
        try {
          Deno.kill(pid, "SIGCONT");
        } catch { /* gone */ }
      }
    }, STOP_MS);
    try {
      const spinner = await h.connect();
      const t0 = performance.now();
      const [waited, spun] = await Promise.all([
        starved.call("browser_press_key", { key: "Tab" }),
        (async () => {
          const page = await spinner.call("browser_navigate", {
            url: `${site.origin}/script-loop`,
          });
          return await spinner.call("browser_click", { ref: refOf(page.text, /button "Spin"/) });
        })(),
      ]);
      const ms = performance.now() - t0;
      assert.match(spun.text, /^error: PAGE_UNRESPONSIVE \(tab 0 stopped answering \(a script/);
      assert.equal(waited.isError, false, waited.text);
      assert.ok(ms >= STOP_MS - 500, `the starved call waited for its renderer (${ms} ms)`);
      // The starved page is the same page, still there.
      const after = await starved.call("browser_snapshot");
      assert.match(after.text, /# Safe page/);
    } finally {
      clearTimeout(resume);
      for (const pid of stopped) {
        try {
          Deno.kill(pid, "SIGCONT");
        } catch { /* gone */ }
      }
    }
  } finally {
    await site[Symbol.asyncDispose]();
  }
});
