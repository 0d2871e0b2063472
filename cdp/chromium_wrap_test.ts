import assert from "node:assert/strict";
import { findBrowser, launchBrowser, runningAsRoot } from "./chromium_process.ts";

/** Command lines of `pid` and its children. */
function childCommands(pid: number): string[] {
  const out: string[] = [Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ")];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const ppid = /^PPid:\s*(\d+)/m.exec(Deno.readTextFileSync(`/proc/${e.name}/status`))?.[1];
      if (Number(ppid) !== pid) continue;
      out.push(Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replaceAll("\0", " "));
    } catch { /* gone */ }
  }
  return out;
}

Deno.test("launchBrowser() runs the browser under a wrapper, the CDP pipe passing through it", async () => {
  const profileDir = await Deno.makeTempDir({ prefix: "omotai-wrap-" });
  try {
    // `env` execs the browser in its place: the pipe's fds 3 and 4 must reach it untouched.
    await using browser = await launchBrowser({
      executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
      profileDir,
      wrap: { command: ["/usr/bin/env", "LANG=C.UTF-8"] },
    });
    const v = await browser.connection.root.send("Browser.getVersion");
    assert.match(v.product, /Chrome/);
    const cmd = childCommands(browser.pid!).join("\n");
    assert.match(cmd, new RegExp(`--user-data-dir=${profileDir}`));
    // Without `sandbox: true` a root runtime's browser keeps --no-sandbox, as before.
    if (runningAsRoot()) assert.match(cmd, /--no-sandbox/);
  } finally {
    await Deno.remove(profileDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("launchBrowser() with a wrapper's profile path hands the browser that path", async () => {
  const profileDir = await Deno.makeTempDir({ prefix: "omotai-wrap-" });
  try {
    // The wrapper shows the browser the profile elsewhere (here: a symlink to it).
    const seen = `${profileDir}-seen`;
    await Deno.symlink(profileDir, seen);
    try {
      await using browser = await launchBrowser({
        executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
        profileDir,
        wrap: { command: ["/usr/bin/env"], profileDir: seen },
      });
      assert.equal(browser.profileDir, profileDir, "the runtime keeps its own path");
      const cmd = childCommands(browser.pid!).join("\n");
      assert.match(cmd, new RegExp(`--user-data-dir=${seen}`));
    } finally {
      await Deno.remove(seen).catch(() => {});
    }
  } finally {
    await Deno.remove(profileDir, { recursive: true }).catch(() => {});
  }
});
