import assert from "node:assert/strict";
import { testBrowser } from "../tests/helpers/operator_browser.ts";
import { BrowserLaunchError, CdpClosedError, CdpError } from "./errors.ts";
import {
  findBrowser,
  HARDENED_ARGS,
  HEADLESS_SHELL_CANDIDATES,
  isHeadlessShell,
  launchBrowser,
} from "./chromium_process.ts";
import { openTab } from "./open_tab.ts";

Deno.test("findBrowser() prefers OMOTAI_BROWSER and explains a missing one", () => {
  const only = (path: string) => (p: string) => p === path;
  assert.equal(findBrowser("/opt/x/chrome", { exists: only("/opt/x/chrome") }), "/opt/x/chrome");
  assert.throws(() => findBrowser("/nope", { exists: () => false }), BrowserLaunchError);
  assert.equal(
    findBrowser(undefined, { exists: only("/usr/bin/google-chrome") }),
    "/usr/bin/google-chrome",
  );
  assert.throws(() => findBrowser(undefined, { exists: () => false }), /apt-get install chromium/);
});

Deno.test("findBrowser() takes the headless shell first, and a full browser for a window", () => {
  const shell = HEADLESS_SHELL_CANDIDATES[0];
  const both = (p: string) => p === shell || p === "/usr/bin/chromium";
  assert.equal(findBrowser(undefined, { exists: both }), shell);
  assert.equal(findBrowser(undefined, { exists: both, headful: true }), "/usr/bin/chromium");
  assert.equal(findBrowser(undefined, { exists: both, preferFull: true }), "/usr/bin/chromium");
  assert.equal(findBrowser(undefined, { exists: (p) => p === shell, preferFull: true }), shell);
  assert.equal(
    findBrowser(undefined, { exists: (p) => p === "/usr/bin/chromium" }),
    "/usr/bin/chromium",
  );
  assert.throws(
    () => findBrowser(undefined, { exists: (p) => p === shell, headful: true }),
    BrowserLaunchError,
  );
  assert.throws(
    () => findBrowser(shell, { exists: (p) => p === shell, headful: true }),
    /a window needs a full browser/,
  );
  assert.ok(isHeadlessShell("/opt/x/headless_shell") && !isHeadlessShell("/usr/bin/chromium"));
});

Deno.test("HARDENED_ARGS talk over a pipe and never open a debugging port", () => {
  assert.ok(HARDENED_ARGS.includes("--remote-debugging-pipe"));
  assert.ok(!HARDENED_ARGS.some((a) => a.startsWith("--remote-debugging-port")));
  for (
    const f of [
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ]
  ) {
    assert.ok(HARDENED_ARGS.includes(f), f);
  }
});

Deno.test("launchBrowser() speaks typed CDP over the pipe and stops cleanly", async () => {
  // Chromium's helper processes may outlive the killed main process for a moment: the
  // store's removal, when `chromium` is disposed, retries until they are gone.
  await using chromium = await testBrowser();
  const { browser, profileDir } = chromium;
  const version = await browser.connection.root.send("Browser.getVersion");
  assert.match(version.product, /Chrome/);
  await assert.rejects(
    () => browser.connection.root.send("Target.closeTarget", { targetId: "no-such-target" }),
    CdpError,
  );
  // No DevToolsActivePort file: nothing listens on a port.
  await assert.rejects(() => Deno.stat(`${profileDir}/DevToolsActivePort`), Deno.errors.NotFound);
  browser.kill("SIGKILL");
  await browser.exited;
  await assert.rejects(() => browser.connection.root.send("Browser.getVersion"), CdpClosedError);
});

Deno.test("launchBrowser() keeps site isolation on every build: a cross-site frame is a target of its own", async () => {
  // The headless shell, unlike the full browser, does not isolate sites unless told.
  const frame = Deno.serve(
    { hostname: "127.0.0.2", port: 0, onListen() {} },
    () => new Response("<p>inner</p>", { headers: { "content-type": "text/html" } }),
  );
  const top = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(`<iframe src="http://127.0.0.2:${frame.addr.port}/"></iframe>`, {
        headers: { "content-type": "text/html" },
      }),
  );
  try {
    await using chromium = await testBrowser();
    const root = chromium.browser.connection.root;
    await root.send("Target.createTarget", { url: `http://127.0.0.1:${top.addr.port}/` });
    let frames: string[] = [];
    for (let i = 0; i < 100 && frames.length === 0; i++) {
      const { targetInfos } = await root.send("Target.getTargets", {});
      frames = targetInfos.filter((t) => t.type === "iframe").map((t) => t.url);
      if (frames.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(frames, [`http://127.0.0.2:${frame.addr.port}/`]);
  } finally {
    await top.shutdown();
    await frame.shutdown();
  }
});

Deno.test("launchBrowser() leaves a page no ad auction, shared storage, topics or fenced frame", async () => {
  // The headless shell allows them outright; they make requests outside any tab's guard.
  const site = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("<p>x</p>", { headers: { "content-type": "text/html" } }),
  );
  try {
    await using chromium = await testBrowser();
    const url = `http://127.0.0.1:${site.addr.port}/`;
    const tab = await openTab(chromium.browser, url);
    // Loaded when the document says so (a loaded suite may take its time; no event to miss).
    const ready = () =>
      tab.session.send("Runtime.evaluate", {
        expression: `location.href === ${JSON.stringify(url)} && document.readyState`,
        returnByValue: true,
      });
    for (let i = 0; i < 300 && (await ready()).result.value !== "complete"; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await ready()).result.value, "complete", "the page loaded");
    const { result } = await tab.session.send("Runtime.evaluate", {
      expression: `JSON.stringify([isSecureContext, typeof navigator.joinAdInterestGroup,
        typeof navigator.runAdAuction, typeof window.sharedStorage,
        typeof document.browsingTopics, typeof HTMLFencedFrameElement])`,
      returnByValue: true,
    });
    assert.deepEqual(JSON.parse(result.value as string), [
      true,
      "undefined",
      "undefined",
      "undefined",
      "undefined",
      "undefined",
    ]);
  } finally {
    await site.shutdown();
  }
});

Deno.test("launchBrowser() reports a binary that is not a browser", async () => {
  const dir = await Deno.makeTempDir();
  await assert.rejects(
    () => launchBrowser({ executable: "/bin/true", profileDir: dir, startTimeoutMs: 3_000 }),
    BrowserLaunchError,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("launchBrowser() called off: before the spawn nothing starts; during the first round trip the process is killed and the launch rejects at once", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const before = new AbortController();
    before.abort();
    await assert.rejects(
      () => launchBrowser({ executable: "/nonexistent", profileDir: dir, signal: before.signal }),
      /called off/,
    );
    // A "browser" that never answers on the pipe: only the signal can end its launch early.
    const silent = `${dir}/silent.sh`;
    await Deno.writeTextFile(silent, `#!/bin/sh\necho $$ > '${dir}/pid'\nexec sleep 120\n`);
    await Deno.chmod(silent, 0o755);
    const during = new AbortController();
    const launching = launchBrowser({
      executable: silent,
      profileDir: dir,
      startTimeoutMs: 120_000,
      signal: during.signal,
    });
    const pidFile = `${dir}/pid`;
    for (let i = 0; i < 600 && !(await Deno.stat(pidFile).catch(() => null)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    during.abort();
    await assert.rejects(() => launching, /called off/);
    const pid = (await Deno.readTextFile(pidFile)).trim();
    let alive = true;
    for (let i = 0; i < 200 && alive; i++) {
      const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
      alive = stat !== "" && !/^\d+ \([^)]*\) Z/.test(stat);
      if (alive) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(alive, false, "the called-off process was killed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
