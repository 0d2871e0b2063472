import assert from "node:assert/strict";
import { findBrowser, ProfileStore } from "../../cdp/mod.ts";
import type { AuditEvent } from "../store/audit_row.ts";
import { BrowserSession } from "./browser_session.ts";
import { recoverHang } from "./hang_recovery.ts";
import { hostPids, killPid, mapHostPids, parseProcs, parseStatus } from "./renderer_pids.ts";

async function world() {
  const dir = await Deno.makeTempDir({ prefix: "omotai-hang-test-" });
  const profiles = await ProfileStore.open(dir);
  const rows: AuditEvent[] = [];
  const session = new BrowserSession({
    profiles,
    executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    audit: { append: (e) => void rows.push(e) },
  });
  return {
    session,
    rows,
    async [Symbol.asyncDispose]() {
      await session[Symbol.asyncDispose]();
      await profiles[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** The host pids of the browser's renderers, as the runtime finds them (once there are any). */
async function rendererPids(session: BrowserSession): Promise<number[]> {
  const live = await session.ensureStarted();
  for (let i = 0; i < 100; i++) {
    const { processInfo } = await live.browser.connection.root.send("SystemInfo.getProcessInfo");
    const self = processInfo.find((p) => p.type === "browser")!;
    const renderers = processInfo.filter((p) => p.type === "renderer").map((p) => p.id);
    const found = await hostPids(live.browser.pid!, self.id, renderers);
    if (found.size > 0) return [...found.values()];
    await new Promise((r) => setTimeout(r, 100));
  }
  return [];
}

function signal(pids: readonly number[], sig: Deno.Signal): void {
  for (const pid of pids) {
    try {
      Deno.kill(pid, sig);
    } catch { /* gone */ }
  }
}

Deno.test("mapHostPids() places a pid of the browser's namespace on the host, the shallowest match being the browser", () => {
  const procs = [
    parseStatus(100, "PPid:\t1\nNSpid:\t100\n")!, // the sandbox's first process
    parseStatus(101, "PPid:\t100\nNSpid:\t101\t1\n")!, // sh inside
    parseStatus(102, "PPid:\t101\nNSpid:\t102\t3\n")!, // the browser: pid 3 inside
    parseStatus(103, "PPid:\t102\nNSpid:\t103\t4\t1\n")!, // zygote, own namespace
    parseStatus(104, "PPid:\t103\nNSpid:\t104\t7\t3\n")!, // renderer: 7 to the browser, 3 inner
    parseStatus(200, "PPid:\t1\nNSpid:\t200\t7\n")!, // another sandbox's process with pid 7
  ];
  assert.deepEqual([...mapHostPids(procs, 100, 3, [7, 9])], [[7, 104]]);
  assert.deepEqual([...mapHostPids(procs, 100, 42, [7])], []);
  assert.equal(parseStatus(5, "Name:\tx\n"), undefined);
  // A kernel without NSpid: one namespace.
  assert.deepEqual(parseStatus(5, "PPid:\t1\n"), { pid: 5, ppid: 1, nspid: [5] });
});

Deno.test("parseProcs() reads grep's /proc/<pid>/status lines, a process per pid, ignoring the rest", () => {
  const text = [
    "/proc/100/status:PPid:\t1",
    "/proc/100/status:NSpid:\t100",
    "/proc/104/status:PPid:\t103",
    "/proc/104/status:NSpid:\t104\t7\t3",
    "/proc/9/status:Name:\tnoise",
    "garbage",
  ].join("\n");
  assert.deepEqual(parseProcs(text), [
    { pid: 100, ppid: 1, nspid: [100] },
    { pid: 104, ppid: 103, nspid: [104, 7, 3] },
  ]);
  assert.deepEqual(parseProcs(""), []);
});

Deno.test("readProcs() works with the runtime's own permissions (run of /bin/sh, no read of /proc)", async () => {
  const src = new URL("./renderer_pids.ts", import.meta.url).href;
  // `deno run` of a file (`deno eval` would have every permission).
  const dir = await Deno.makeTempDir();
  const probe = `${dir}/probe.ts`;
  await Deno.writeTextFile(
    probe,
    `const m = await import(${JSON.stringify(src)});\n` +
      `console.log(JSON.stringify((await m.readProcs()).find((p) => p.pid === Deno.pid)));\n`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-run=/bin/sh", `--allow-read=${dir}`, probe],
    stdout: "piped",
    stderr: "piped",
  }).output().finally(() => Deno.remove(dir, { recursive: true }));
  const text = new TextDecoder().decode(out.stdout).trim();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const me = JSON.parse(text);
  assert.equal(me.ppid > 0, true, text);
  assert.equal(me.nspid.at(0), me.pid, text);
});

Deno.test("killPid() refuses pids 1 and below and what is no pid", async () => {
  for (const pid of [0, 1, -5, 1.5, Number.NaN]) assert.equal(await killPid(pid), false);
});

// One session for the three (two browser launches instead of four): the tab recovery and the
// renderer kill each end with the same browser answering on a fresh tab, and the browser's
// replacement, which ends it, comes last. Each is a step of its own, failing alone; notices
// left by one are taken before the next.
Deno.test("recoverHang(), killPid() and BrowserSession's replacement, in turn on one session", async (t) => {
  await using w = await world();
  await t.step(
    "recoverHang() closes a tab whose renderer gets no CPU at all (closed, else its renderer killed by pid); the browser goes on",
    async () => {
      const live = await w.session.ensureStarted();
      const tab = await w.session.currentTab();
      await tab.session.send("Page.navigate", { url: "data:text/html,<h1>stopped</h1>" });
      const stopped = await rendererPids(w.session);
      assert.ok(stopped.length > 0, "the renderers are found on the host");
      // A renderer that gets no CPU at all: neither Page.crash (its IO thread) nor a close
      // (its unload) is ever answered.
      signal(stopped, "SIGSTOP");
      try {
        const lifecycle: [string, string | undefined][] = [];
        const replaced: string[] = [];
        const outcome = await recoverHang(
          {
            live,
            lifecycle: (kind, reason) => void lifecycle.push([kind, reason]),
            replaceBrowser: (reason) => void replaced.push(reason),
          },
          tab,
          "CALL_TIMEOUT",
        );
        assert.deepEqual(replaced, [], JSON.stringify(lifecycle));
        assert.equal(outcome.closed, true);
        if (outcome.killed === 0) {
          // Chromium let the tab go without its renderer: the first rung did.
          assert.deepEqual(lifecycle, [["hang_tab_closed", "CALL_TIMEOUT"]]);
        } else {
          assert.deepEqual(lifecycle.map(([k]) => k), ["renderer_killed"]);
          assert.ok(
            stopped.some((pid) => {
              try {
                return /^State:\s*Z/m.test(Deno.readTextFileSync(`/proc/${pid}/status`));
              } catch {
                return true;
              }
            }),
            "a stopped renderer is gone",
          );
        }
      } finally {
        signal(stopped, "SIGCONT");
      }
      // The same browser opens a new tab and answers.
      const next = await w.session.currentTab();
      const r = await next.session.send("Runtime.evaluate", {
        expression: "1+1",
        returnByValue: true,
      });
      assert.equal(r.result.value, 2);
      assert.equal(w.session.browserProcess, live.browser);
    },
  );
  // A crash the recovery may have left (its renderer killed) is closed and its notice taken:
  // the next step's crash and notice must be its own tab's.
  await w.session.guard.closeCrashed();
  w.session.takeNotices();
  await t.step(
    "killPid() ends a renderer found by hostPids(): its tab reports the crash",
    async () => {
      const tab = await w.session.currentTab();
      const crashed = new Promise<void>((r) =>
        tab.session.on("Inspector.targetCrashed", () => r())
      );
      await tab.session.send("Page.navigate", { url: "data:text/html,<h1>to be killed</h1>" });
      const pids = await rendererPids(w.session);
      assert.ok(pids.length > 0, "the renderers are found on the host");
      for (const pid of pids) assert.equal(await killPid(pid), true);
      await crashed;
      assert.equal(w.session.guard.crashes.crashed(tab.info.targetId), true);
      // The crashed tab is closed before the next call, with a notice.
      await w.session.guard.closeCrashed();
      assert.ok(
        w.session.takeNotices().some((n) =>
          /tab 0's page crashed .*the runtime closed tab 0/.test(n)
        ),
      );
      assert.equal(tab.session.detached, true);
    },
  );
  w.session.takeNotices();
  await t.step(
    "BrowserSession: a browser that stops answering is replaced by the recovery (browser_replaced); the next call starts a fresh one",
    async () => {
      const live = await w.session.ensureStarted();
      await w.session.currentTab();
      const pid = live.browser.pid!;
      const before = w.rows.length;
      // The whole browser frozen: nothing it is sent is answered.
      Deno.kill(pid, "SIGSTOP");
      try {
        const did = await w.session.guard.recoverTimeout();
        assert.match(did, /the runtime replaced it: the next call starts a fresh one/);
      } finally {
        try {
          Deno.kill(pid, "SIGCONT");
        } catch { /* gone */ }
      }
      assert.ok(
        w.rows.slice(before).some((r) =>
          r.kind === "browser_replaced" && r.reason === "BROWSER_UNRESPONSIVE"
        ),
        w.rows.map((r) => `${r.kind}:${r.reason}`).join(" "),
      );
      await live.browser.exited;
      const tab = await w.session.currentTab();
      assert.notEqual(w.session.browserProcess, live.browser);
      const r = await tab.session.send("Runtime.evaluate", {
        expression: "1+1",
        returnByValue: true,
      });
      assert.equal(r.result.value, 2);
      assert.ok(w.session.takeNotices().some((n) => /replaced this session's browser/.test(n)));
    },
  );
});
