import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { keyedTransport, refOf, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { serveFixtureSite } from "./fixtures/site.ts";

async function connect(url: string, key: string): Promise<TestClient> {
  const client = new Client({ name: "self-declared-name", version: "0" });
  await client.connect(keyedTransport(url, key));
  return new TestClient(client);
}

Deno.test("agents browse under their own policies side by side; identity comes from the key", async () => {
  await using site = serveFixtureSite();
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-agents-" });
  const readOnly = `${dataDir}/reader.yaml`;
  await Deno.writeTextFile(readOnly, `allowed_origins: [${site.origin}]\nread_only: true\n`);
  await using runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${site.origin}]\nread_only: false\n`,
  );
  const reader = await runtime.agents.add("reader", readOnly);
  const writer = await runtime.agents.add("writer");
  await using r = await connect(runtime.url!, reader.key);
  await using w = await connect(runtime.url!, writer.key);
  const rHome = await r.call("browser_navigate", { url: `${site.origin}/` });
  const wHome = await w.call("browser_navigate", { url: `${site.origin}/` });
  const denied = await r.call("browser_click", { ref: refOf(rHome.text, /button "Sign in"/) });
  assert.match(denied.text, /^denied: READ_ONLY_SUBMIT/);
  assert.equal(site.posts.get("/login"), undefined);
  const posted = await w.call("browser_click", { ref: refOf(wHome.text, /button "Sign in"/) });
  assert.equal(posted.isError, false, posted.text);
  assert.equal(site.posts.get("/login")?.length, 1);
  const agents = new Set(
    (await runtime.audit.rows()).filter((row) => row.source === "action").map((row) => row.agent),
  );
  assert.deepEqual([...agents].sort(), ["reader", "writer"]);

  // A removed key stops working at once and its browser goes.
  await runtime.agents.remove("reader");
  const after = await r.call("browser_snapshot");
  assert.equal(after.isError, true);
  assert.doesNotMatch(after.text, /Fixture home/);
  const still = await w.call("browser_snapshot");
  assert.match(still.text, /Welcome|Signed in|Fixture/);
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
});

Deno.test("the runtime's own origin is unreachable from the controlled browser, whatever is allowed", async () => {
  await using site = serveFixtureSite();
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-self-" });
  await using runtime = await startTestRuntime(dataDir, `allowed_origins: [${site.origin}]\n`);
  // The operator even allows it explicitly: the reservation wins.
  await runtime.domains.add(runtime.url!, "allow");
  await using c = await connect(runtime.url!, (await runtime.agents.add("probe")).key);
  for (const path of ["/mcp", "/api/approvals", "/"]) {
    const r = await c.call("browser_navigate", { url: `${runtime.url}${path}` });
    assert.match(r.text, /^denied: RUNTIME_ORIGIN/, `${path}: ${r.text}`);
  }
  const localhost = runtime.url!.replace("127.0.0.1", "localhost");
  assert.match(
    (await c.call("browser_navigate", { url: localhost })).text,
    /^denied: RUNTIME_ORIGIN/,
  );
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
});

Deno.test("a hostile page cannot reach the console or the API: fetch, form post and iframe are refused", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-hostile-console-" });
  let runtimeUrl = "";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response(
        `<!doctype html><title>Lure</title><h1>Lure</h1>
<iframe src="${runtimeUrl}/"></iframe>
<form id="f" method="post" action="${runtimeUrl}/api/approvals/x"><input name="decision" value="approve"><button>Approve</button></form>
<script>fetch("${runtimeUrl}/api/approvals?state=pending").catch(() => {});
fetch("${runtimeUrl}/api/approvals/x", {method: "POST", body: '{"decision":"approve"}'}).catch(() => {});</script>`,
        { headers: { "content-type": "text/html" } },
      ),
  );
  const site = `http://127.0.0.1:${server.addr.port}`;
  await using runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${site}]\nread_only: false\n`,
  );
  runtimeUrl = runtime.url!;
  await runtime.domains.add(runtimeUrl, "allow");
  try {
    await using c = await connect(runtimeUrl, (await runtime.agents.add("lured")).key);
    const page = await c.call("browser_navigate", { url: `${site}/` });
    const click = await c.call("browser_click", { ref: refOf(page.text, /button "Approve"/) });
    assert.match(click.text, /^denied: RUNTIME_ORIGIN/);
    const refused = (await runtime.audit.rows()).filter((r) => r.reason === "RUNTIME_ORIGIN");
    // The iframe's document and both fetches were stopped at the request guard or the proxy.
    assert.ok(
      refused.filter((r) => r.source === "request" || r.source === "proxy").length >= 3,
      JSON.stringify(refused),
    );
    assert.ok(refused.some((r) => r.source === "action"));
    assert.ok(!refused.some((r) => r.decision !== "deny"));
  } finally {
    await server.shutdown();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
