import assert from "node:assert/strict";
import { spec } from "../../tests/helpers/policies.ts";
import { AuditLog } from "../audit/audit_log.ts";
import { PolicyEngine } from "../policy/engine.ts";
import { baseFacts, FRESH_SESSION } from "../policy/fact_builders.ts";
import type { Facts } from "../policy/facts.ts";
import { openDatabase } from "../store/database.ts";
import type { Approver, PendingApproval } from "./approver.ts";
import { Boundary } from "./boundary.ts";
import { DomainRules } from "./domains.ts";
import type { ProposedAction } from "./gate.ts";
import { PolicyGate } from "./policy_gate.ts";

const ORIGIN = "https://portal.test";

async function world(policy: Record<string, unknown>) {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/o.db`);
  const wasm = await Deno.readFile(
    new URL("../../policies-wasm/dist/baseline.wasm", import.meta.url),
  );
  const engine = await PolicyEngine.create([
    await spec("baseline", wasm, { allowed_origins: [ORIGIN], ...policy }),
  ]);
  const boundary = new Boundary({
    engine,
    domains: new DomainRules(db),
    audit: new AuditLog(db),
    allowedOrigins: [ORIGIN],
  });
  return {
    boundary,
    async [Symbol.asyncDispose]() {
      await engine[Symbol.asyncDispose]();
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function submit(): ProposedAction {
  const facts: Facts = {
    ...baseFacts("click", FRESH_SESSION),
    method: "POST",
    frame: { top: true, origin: ORIGIN },
    form: {
      method: "POST",
      action_origin: ORIGIN,
      action_path: "/transfer",
      submits: true,
      fields: [{ name: "amount", type: "text" }],
    },
    element: {
      tag: "button",
      type: "submit",
      role: null,
      link_scheme: null,
      link_origin: null,
      link_path: null,
    },
  };
  return { tool: "browser_click", kind: "click", facts, session: { id: "s-1", agent: "a" } };
}

const post: Facts = {
  ...baseFacts("request", FRESH_SESSION),
  target: { scheme: "https", origin: ORIGIN, path: "/transfer" },
  method: "POST",
  resource_type: "document",
  initiator: "form",
};
const ctx = { session: "s-1", agent: "a", source: "request" as const };

Deno.test("PolicyGate denies with a fact-built detail and never asks for a plain deny", async () => {
  await using w = await world({ read_only: true });
  let asked = false;
  const approver: Approver = {
    request: () => {
      asked = true;
      return Promise.resolve({ outcome: "approved" });
    },
  };
  const v = await new PolicyGate(w.boundary, { approver }).check(submit());
  assert.equal(v.decision, "deny");
  assert.equal(v.reason, "READ_ONLY_SUBMIT");
  assert.equal(v.detail, `POST form to ${ORIGIN}/transfer`);
  assert.equal(asked, false);
});

Deno.test("PolicyGate without an approver answers a confirm with CONFIRM_UNAVAILABLE", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  const v = await new PolicyGate(w.boundary).check(submit());
  assert.deepEqual([v.decision, v.reason, v.detail], [
    "deny",
    "CONFIRM_UNAVAILABLE",
    `POST form to ${ORIGIN}/transfer`,
  ]);
  assert.equal(v.approved, undefined);
});

Deno.test("PolicyGate asks the approver with facts only and passes the call's signal", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  let pending: PendingApproval | undefined;
  let signal: AbortSignal | undefined;
  const approver: Approver = {
    request: (p, s) => {
      pending = p;
      signal = s;
      return Promise.resolve({ outcome: "denied", reason: "CONFIRM_DENIED" });
    },
  };
  const controller = new AbortController();
  const v = await new PolicyGate(w.boundary, { approver }).check(submit(), controller.signal);
  assert.equal(v.reason, "CONFIRM_DENIED");
  assert.equal(signal, controller.signal);
  assert.equal(pending?.session, "s-1");
  assert.equal(pending?.tool, "browser_click");
  assert.equal(pending?.detail, `POST form to ${ORIGIN}/transfer`);
  assert.equal(pending?.facts.form?.action_path, "/transfer");
});

Deno.test("PolicyGate maps an unanswered approval to CONFIRM_TIMEOUT", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  const approver: Approver = { request: () => Promise.resolve({ outcome: "timeout" }) };
  const v = await new PolicyGate(w.boundary, { approver }).check(submit());
  assert.deepEqual([v.decision, v.reason], ["deny", "CONFIRM_TIMEOUT"]);
});

Deno.test("PolicyGate's approval opens a write window for exactly the approved submit", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  const approver: Approver = { request: () => Promise.resolve({ outcome: "approved" }) };
  const v = await new PolicyGate(w.boundary, { approver }).check(submit());
  assert.deepEqual([v.decision, v.reason], ["allow", "APPROVED"]);
  assert.equal((await w.boundary.judgeRequest(post, ctx)).reason, "READ_ONLY_WRITE");
  const close = v.approved!.openWindow();
  assert.equal((await w.boundary.judgeRequest(post, ctx)).reason, "WRITE_WINDOW");
  const other = { ...post, target: { ...post.target!, path: "/other" } };
  assert.equal((await w.boundary.judgeRequest(other, ctx)).decision, "deny");
  close();
  assert.equal((await w.boundary.judgeRequest(post, ctx)).reason, "READ_ONLY_WRITE");
});

Deno.test("PolicyGate refuses past max_confirmations with CONFIRM_LIMIT and never asks", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  let asked = 0;
  const approver: Approver = {
    request: () => {
      asked++;
      return Promise.resolve({ outcome: "approved" });
    },
  };
  const gate = new PolicyGate(w.boundary, { approver, maxConfirmations: 2 });
  const used = submit();
  used.facts.session.confirmations_used = 2;
  const v = await gate.check(used);
  assert.deepEqual([v.decision, v.reason], ["deny", "CONFIRM_LIMIT"]);
  assert.equal(asked, 0);
  assert.equal((await gate.check(submit())).reason, "APPROVED");
});

Deno.test("PolicyGate shows the page's details, passes the timeout, and refuses a page that changed", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  let seen: PendingApproval | undefined;
  const approver: Approver = {
    request: (p) => {
      seen = p;
      return Promise.resolve({ outcome: "approved" });
    },
  };
  const gate = new PolicyGate(w.boundary, { approver, confirmTimeoutMs: 4_000 });
  const details = {
    method: "POST",
    url: `${ORIGIN}/transfer?to=bob`,
    origin: ORIGIN,
    fields: [{ name: "amount", value: "10" }],
  };
  let fingerprint = "d1:form-a";
  const action = { ...submit(), approval: () => Promise.resolve({ details, fingerprint }) };
  assert.equal((await gate.check(action)).reason, "APPROVED");
  assert.deepEqual(seen?.details, details);
  assert.equal(seen?.timeoutMs, 4_000);
  // The page changes while the human decides: the approval is void.
  const changing = {
    ...submit(),
    approval: () => {
      const view = { details, fingerprint };
      fingerprint = "d2:form-a";
      return Promise.resolve(view);
    },
  };
  const v = await gate.check(changing);
  assert.deepEqual([v.decision, v.reason], ["deny", "CONFIRM_STALE"]);
  assert.equal(v.approved, undefined);
});
