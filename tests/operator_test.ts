import assert from "node:assert/strict";
import { eventually, refOf, startHarness } from "./helpers/harness.ts";

Deno.test("ask_human waits for the operator's answer through the API, and times out without one", async () => {
  await using h = await startHarness((site) =>
    `allowed_origins: [${site.origin}]\nconfirm_timeout_seconds: 2\n`
  );
  await using c = await h.connect();
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${h.runtime.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${h.runtime.adminToken}`, ...init.headers },
    });
  const asked = c.call("ask_human", { question: "Which invoice should I pay first?" });
  let id = "";
  assert.ok(
    await eventually(async () => {
      const list = await (await api("/api/questions?state=pending")).json() as {
        id: string;
        question: string;
      }[];
      id = list.find((q) => q.question.startsWith("Which invoice"))?.id ?? "";
      return id !== "";
    }),
  );
  // An agent key does not open the operator's door.
  const agentKey = (await h.runtime.agents.add("sneaky")).key;
  const refused = await fetch(`${h.runtime.url}/api/questions/${id}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${agentKey}`, "content-type": "application/json" },
    body: JSON.stringify({ answer: "all of them" }),
  });
  assert.equal(refused.status, 401);
  await refused.body?.cancel();
  const answered = await api(`/api/questions/${id}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ answer: "INV-1013 first" }),
  });
  assert.equal(answered.status, 200);
  await answered.body?.cancel();
  const r = await asked;
  assert.equal(r.isError, false, r.text);
  assert.match(r.text, /the operator answered: "INV-1013 first"/);
  // Nobody answers: ASK_TIMEOUT after confirm_timeout_seconds.
  const late = await c.call("ask_human", { question: "Anyone there?" });
  assert.match(late.text, /^error: ASK_TIMEOUT/);
  // The audit keeps neither the question nor the answer.
  const rows = JSON.stringify(
    (await h.runtime.audit.rows()).filter((row) => row.kind === "ask_human"),
  );
  assert.match(rows, /ANSWERED/);
  assert.doesNotMatch(rows, /INV-1013|Which invoice/);
});

Deno.test("an approval the agent's client cancels is withdrawn from the console", async () => {
  await using h = await startHarness((site) =>
    `allowed_origins: [${site.origin}]\nread_only: true\nconfirm_writes: true\n`
  );
  await using c = await h.connect();
  const pending = async () =>
    await (await fetch(`${h.runtime.url}/api/approvals?state=pending`, {
      headers: { Authorization: `Bearer ${h.runtime.adminToken}` },
    })).json() as unknown[];
  const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
  const controller = new AbortController();
  const click = c.client.callTool(
    { name: "browser_click", arguments: { ref: refOf(home.text, /button "Sign in"/) } },
    undefined,
    { signal: controller.signal },
  ).catch((err: Error) => err);
  assert.ok(await eventually(async () => (await pending()).length === 1));
  controller.abort();
  assert.ok((await click) instanceof Error, "the call was cancelled");
  assert.ok(await eventually(async () => (await pending()).length === 0), "withdrawn");
  assert.ok(
    await eventually(async () =>
      (await h.runtime.audit.rows()).some((r) =>
        r.kind === "approval" && r.reason === "CONFIRM_WITHDRAWN"
      )
    ),
  );
  assert.equal(h.site.posts.get("/login"), undefined);
});
