import assert from "node:assert/strict";
import { MAX_TABS } from "../runtime/browser/tabs.ts";
import { eventually, startHarness } from "./helpers/harness.ts";

/** A page that opens `n` windows as it loads, without a user gesture, on two origins. */
function serveFlood(n: number) {
  const other = Deno.serve(
    { hostname: "127.0.0.2", port: 0, onListen() {} },
    () =>
      new Response("<title>popup</title><p>popup</p>", {
        headers: { "content-type": "text/html" },
      }),
  );
  const site = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    const body = path === "/flood"
      ? `<title>flood</title><p>flood</p><script>
          for (let i = 0; i < ${n}; i++) {
            window.open(i % 2 ? "http://127.0.0.2:${other.addr.port}/p" + i : "/p" + i, "w" + i);
          }
        </script>`
      : "<title>popup</title><p>popup</p>";
    return new Response(body, { headers: { "content-type": "text/html" } });
  });
  return {
    origin: `http://127.0.0.1:${site.addr.port}`,
    other: `http://127.0.0.2:${other.addr.port}`,
    async [Symbol.asyncDispose]() {
      await site.shutdown();
      await other.shutdown();
    },
  };
}

Deno.test("MAX_TABS: a page that opens windows in a loop keeps at most MAX_TABS tabs, said once", async () => {
  await using site = serveFlood(60);
  await using h = await startHarness(() => `allowed_origins: [${site.origin}, ${site.other}]\n`);
  await using c = await h.connect();
  const nav = await c.call("browser_navigate", { url: `${site.origin}/flood` });
  assert.equal(nav.isError, false, nav.text.slice(0, 1_000));
  let listed = "";
  assert.ok(
    await eventually(async () => {
      listed = (await c.call("browser_tabs", { action: "list" })).text;
      return /closed the new ones/.test(listed) || /closed the new ones/.test(nav.text);
    }, 15_000),
    `the runtime said it closed tabs: ${listed.slice(0, 500)}`,
  );
  // Give any late opener its moment, then count.
  await new Promise((r) => setTimeout(r, 1_000));
  listed = (await c.call("browser_tabs", { action: "list" })).text;
  const tabs = Number(listed.match(/^(\d+) tab\(s\)/m)?.[1]);
  assert.ok(tabs > 1 && tabs <= MAX_TABS, `${tabs} tabs open:\n${listed.slice(0, 2_000)}`);
  const said = `${nav.text}\n${listed}`.match(/closed the new ones/g)?.length ?? 0;
  assert.ok(said <= 2, `the notice is said once per result, not per tab (${said})`);
  // The session still works.
  const snap = await c.call("browser_snapshot");
  assert.equal(snap.isError, false, snap.text.slice(0, 500));
});
