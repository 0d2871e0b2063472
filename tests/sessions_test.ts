import assert from "node:assert/strict";
import { join } from "node:path";
import { eventually, refOf, startHarness } from "./helpers/harness.ts";

async function profileDirs(dataDir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const inst of Deno.readDir(join(dataDir, "profiles"))) {
    if (!inst.isDirectory) continue;
    for await (const s of Deno.readDir(join(dataDir, "profiles", inst.name))) {
      if (s.isDirectory) out.push(join(dataDir, "profiles", inst.name, s.name));
    }
  }
  return out;
}

/** The profile dirs in `dataDir` that are not in `before`: the ones a step's own sessions made. */
async function newDirs(dataDir: string, before: string[]): Promise<string[]> {
  return (await profileDirs(dataDir)).filter((d) => !before.includes(d));
}

async function chromiumPids(profileDir: string): Promise<number[]> {
  const out = await new Deno.Command("pgrep", { args: ["-f", `user-data-dir=${profileDir}`] })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean).map(Number);
}

/**
 * One runtime for the file's cases: each case's sessions are its own (each its own browser
 * and profile) and closed when the case ends (the first two share theirs, one per transport,
 * each step asserting only on its own calls), and a case looks only at the profiles its own
 * sessions made, so what one case leaves cannot make another pass.
 */
Deno.test("BrowserSession: one profile and browser per session, over either transport, gone with it", async (t) => {
  await using h = await startHarness();

  // The first two steps share two sessions, one over each transport, closed before the
  // third: each step asserts only on what it does with them.
  const before = await profileDirs(h.dataDir);
  const a = await h.connect("http");
  const b = await h.connect("sse");
  try {
    await t.step(
      "two sessions share nothing: a cookie set in one is absent in the other",
      async () => {
        await a.call("browser_navigate", { url: `${h.site.origin}/cookie-set` });
        const seenByA = await a.call("browser_navigate", { url: `${h.site.origin}/cookie-show` });
        assert.match(seenByA.text, /cookie: \[sid=session-a-cookie\]/);
        const seenByB = await b.call("browser_navigate", { url: `${h.site.origin}/cookie-show` });
        assert.match(seenByB.text, /cookie: \[none\]/);
        assert.equal((await newDirs(h.dataDir, before)).length, 2, "one profile per session");
      },
    );

    await t.step("each transport drives the same flow: SSE and Streamable HTTP", async () => {
      for (const [kind, c] of [["http", a], ["sse", b]] as const) {
        const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
        const next = await c.call("browser_click", { ref: refOf(home.text, /"Next page" ->/) });
        assert.match(next.text, /# Next page/, kind);
      }
    });
  } finally {
    await a[Symbol.asyncDispose]();
    await b[Symbol.asyncDispose]();
  }

  await t.step(
    "profile dirs are 0700 and removed with their browser when the client leaves",
    async () => {
      const before = await profileDirs(h.dataDir);
      const c = await h.connect("sse");
      await c.call("browser_navigate", { url: `${h.site.origin}/` });
      const [dir] = await newDirs(h.dataDir, before);
      assert.ok(dir, "a profile exists while the session lives");
      assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
      assert.ok((await chromiumPids(dir)).length > 0, "its browser runs");
      await c[Symbol.asyncDispose]();
      assert.ok(await eventually(async () => !(await profileDirs(h.dataDir)).includes(dir)));
      assert.ok(await eventually(async () => (await chromiumPids(dir)).length === 0));
    },
  );

  await t.step("a Streamable HTTP session ends on DELETE and its browser stops", async () => {
    const before = await profileDirs(h.dataDir);
    // The earlier steps' sessions have all been closed; the runtime may still be noticing.
    assert.ok(await eventually(() => h.runtime.http!.connectionCount() === 0));
    const c = await h.connect("http");
    await c.call("browser_navigate", { url: `${h.site.origin}/` });
    const [dir] = await newDirs(h.dataDir, before);
    assert.equal(h.runtime.http!.connectionCount(), 1);
    // The SDK client sends DELETE for the session on terminateSession().
    const transport = c.client.transport as unknown as { terminateSession(): Promise<void> };
    await transport.terminateSession();
    assert.ok(await eventually(() => h.runtime.http!.connectionCount() === 0));
    assert.ok(await eventually(async () => (await chromiumPids(dir)).length === 0));
    await c[Symbol.asyncDispose]();
  });

  await t.step(
    "Chromium killed mid-call fails that call with BROWSER_LOST; the session recovers",
    async () => {
      const before = await profileDirs(h.dataDir);
      await using c = await h.connect();
      await c.call("browser_navigate", { url: `${h.site.origin}/` });
      const [dir] = await newDirs(h.dataDir, before);
      // The longest wait there is: the kill below lands mid-call even when finding and killing
      // the processes takes seconds on a loaded machine (the call ends at the kill, not after).
      const waiting = c.call("browser_wait_for", { time: 30 });
      await new Promise((r) => setTimeout(r, 300));
      for (const pid of await chromiumPids(dir)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* already gone */ }
      }
      const lost = await waiting;
      assert.equal(lost.isError, true);
      assert.match(lost.text, /^error: BROWSER_LOST \(the browser process exited/);
      assert.ok(await eventually(async () => !(await profileDirs(h.dataDir)).includes(dir)));
      const next = await c.call("browser_navigate", { url: `${h.site.origin}/next` });
      assert.equal(next.isError, false, next.text);
      assert.match(next.text, /notice: the previous browser exited; a fresh one was started/);
      assert.match(next.text, /# Next page/);
      await using fresh = await h.connect("sse");
      const other = await fresh.call("browser_navigate", { url: `${h.site.origin}/` });
      assert.equal(other.isError, false, other.text);
    },
  );
});
