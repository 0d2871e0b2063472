import assert from "node:assert/strict";
import { testBoundary } from "../../tests/helpers/boundary.ts";
import { baseFacts, FRESH_SESSION } from "../policy/fact_builders.ts";
import type { Facts } from "../policy/facts.ts";
import type { ApprovalOutcome, Approver, PendingApproval } from "./approver.ts";
import type { ProposedAction } from "./gate.ts";
import { PolicyGate } from "./policy_gate.ts";
import type { HeldWrite } from "./write_hold.ts";

const ORIGIN = "https://portal.test";

function world(policy: Record<string, unknown>) {
  return testBoundary({ allowed: [ORIGIN], config: policy });
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

const urlencoded = "application/x-www-form-urlencoded";
const enc = (s: string) => new TextEncoder().encode(s);

/** The form's own submission, as the proxy holds it. */
function formWrite(body = "amount=10&to=alice", extra: Partial<HeldWrite> = {}): HeldWrite {
  return {
    method: "POST",
    url: `${ORIGIN}/transfer`,
    contentType: urlencoded,
    body: enc(body),
    dest: "document",
    mode: "navigate",
    ...extra,
  };
}

const proxyCtx = { ...ctx, source: "proxy" as const };

function confirmations(used = 0) {
  let n = used;
  return {
    used: () => n,
    count: () => void n++,
    get n() {
      return n;
    },
  };
}

function recording(answer: ApprovalOutcome | (() => Promise<ApprovalOutcome>)) {
  const seen: { pending: PendingApproval; signal?: AbortSignal }[] = [];
  const approver: Approver = {
    request: (pending, signal) => {
      seen.push({ pending, signal });
      return typeof answer === "function" ? answer() : Promise.resolve(answer);
    },
  };
  return { approver, seen };
}

Deno.test("PolicyGate.check() runs a confirmed submit under a write hold and asks nobody about the click", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  const { approver, seen } = recording({ outcome: "approved" });
  const v = await new PolicyGate(w.boundary, { approver }).check(submit());
  assert.deepEqual([v.decision, v.reason], ["allow", "WRITE_HELD"]);
  assert.ok(v.hold);
  assert.equal(seen.length, 0);
  // Without confirm_writes the submit is refused and nothing is held.
  await using ro = await world({ read_only: true });
  const refused = await new PolicyGate(ro.boundary, { approver }).check(submit());
  assert.deepEqual([refused.decision, refused.reason], ["deny", "READ_ONLY_SUBMIT"]);
  assert.equal(refused.hold, undefined);
});

Deno.test("PolicyGate hold shows the operator the held request whole and releases exactly it", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  const { approver, seen } = recording({ outcome: "approved" });
  const gate = new PolicyGate(w.boundary, {
    approver,
    confirmTimeoutMs: 4_000,
    redact: (t) => t.replaceAll("hunter2hunter2", "[redacted]"),
  });
  const v = await gate.check(submit());
  const signal = new AbortController().signal;
  const counted = confirmations();
  const hold = v.hold!.open({ signal, confirmations: counted });
  const write = formWrite("amount=10000&to=mallory&pw=hunter2hunter2", {
    url: `${ORIGIN}/transfer?to=mallory`,
  });
  const d = await w.boundary.judgeRequest(post, proxyCtx, { write });
  assert.deepEqual([d.decision, d.reason], ["allow", "APPROVED"]);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].signal, signal);
  assert.equal(seen[0].pending.timeoutMs, 4_000);
  const details = seen[0].pending.details!;
  assert.equal(details.kind, "form");
  assert.equal(details.request.url.text, `${ORIGIN}/transfer?to=mallory`);
  assert.deepEqual(
    details.request.entries.map((e) => [e.name.text, e.value.text]),
    [["amount", "10000"], ["to", "mallory"], ["pw", "[redacted]"]],
  );
  assert.equal(counted.n, 1);
  assert.deepEqual(hold.outcomes.map((o) => [o.kind, o.decision, o.reason]), [
    ["form", "allow", "APPROVED"],
  ]);
  hold.close();
  assert.equal(
    (await w.boundary.judgeRequest(post, proxyCtx, { write })).reason,
    "READ_ONLY_WRITE",
  );
});

Deno.test("PolicyGate hold refuses what is not the form's own submission unless script writes may be asked", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  const { approver, seen } = recording({ outcome: "approved" });
  const hold = (await new PolicyGate(w.boundary, { approver }).check(submit())).hold!
    .open({ confirmations: confirmations() });
  const variants: [string, HeldWrite][] = [
    ["a fetch", formWrite(undefined, { dest: "empty", mode: "cors" })],
    ["an iframe target", formWrite(undefined, { dest: "iframe" })],
    ["another path", formWrite(undefined, { url: `${ORIGIN}/elsewhere` })],
    ["JSON", formWrite("{}", { contentType: "application/json" })],
    ["another method", formWrite(undefined, { method: "PUT" })],
  ];
  for (const [what, write] of variants) {
    const d = await w.boundary.judgeRequest(post, proxyCtx, { write });
    assert.equal(d.reason, "SCRIPT_WRITE_REFUSED", what);
  }
  assert.equal(seen.length, 0);
  hold.close();
  // With script_writes: confirm each is shown on its own, as a script's request.
  const asking = new PolicyGate(w.boundary, { approver, scriptWrites: true });
  const open = (await asking.check(submit())).hold!.open({ confirmations: confirmations() });
  for (const [what, write] of variants) {
    assert.equal(
      (await w.boundary.judgeRequest(post, proxyCtx, { write })).reason,
      "APPROVED",
      what,
    );
  }
  assert.deepEqual(seen.map((s) => s.pending.details?.kind), variants.map(() => "script"));
  open.close();
  // Script writes may be asked for during any allowed action, not only a confirmed submit.
  const plain = await asking.check({ ...submit(), facts: { ...submit().facts, form: null } });
  assert.deepEqual([plain.decision, plain.reason], ["allow", "OK"]);
  assert.ok(plain.hold);
});

Deno.test("PolicyGate hold answers CONFIRM_DENIED, CONFIRM_TIMEOUT, CONFIRM_LIMIT and CONFIRM_UNAVAILABLE at the request", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  const cases: [string, PolicyGate, number, string][] = [
    [
      "denied",
      new PolicyGate(w.boundary, {
        approver: recording({ outcome: "denied", reason: "CONFIRM_DENIED" }).approver,
      }),
      0,
      "CONFIRM_DENIED",
    ],
    [
      "timeout",
      new PolicyGate(w.boundary, { approver: recording({ outcome: "timeout" }).approver }),
      0,
      "CONFIRM_TIMEOUT",
    ],
    [
      "limit",
      new PolicyGate(w.boundary, {
        approver: recording({ outcome: "approved" }).approver,
        maxConfirmations: 1,
      }),
      1,
      "CONFIRM_LIMIT",
    ],
    ["no console", new PolicyGate(w.boundary), 0, "CONFIRM_UNAVAILABLE"],
    [
      "approver throws",
      new PolicyGate(w.boundary, {
        approver: recording(() => Promise.reject(new Error("x"))).approver,
      }),
      0,
      "CONFIRM_UNAVAILABLE",
    ],
  ];
  for (const [what, gate, used, reason] of cases) {
    const hold = (await gate.check(submit())).hold?.open({ confirmations: confirmations(used) });
    const d = await w.boundary.judgeRequest(post, proxyCtx, { write: formWrite() });
    assert.deepEqual([d.decision, d.reason], ["deny", reason], what);
    assert.deepEqual(hold?.outcomes.map((o) => o.reason), [reason], what);
    hold?.close();
  }
});

Deno.test("PolicyGate hold drain() waits for every held write's answer", async () => {
  await using w = await world({ read_only: true, confirm_writes: true });
  let answer!: (o: ApprovalOutcome) => void;
  const { approver } = recording(() => new Promise((r) => answer = r));
  const hold = (await new PolicyGate(w.boundary, { approver }).check(submit())).hold!
    .open({ confirmations: confirmations() });
  const judged = w.boundary.judgeRequest(post, proxyCtx, { write: formWrite() });
  await new Promise((r) => setTimeout(r, 10));
  let drained = false;
  const drain = hold.drain().then(() => drained = true);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(drained, false);
  answer({ outcome: "approved" });
  await drain;
  assert.equal((await judged).reason, "APPROVED");
  hold.close();
});
