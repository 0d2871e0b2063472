import type { HeldOutcome } from "../gate/write_hold.ts";
import assert from "node:assert/strict";
import { z } from "zod";
import { ProfileStore } from "../../cdp/mod.ts";
import type { AuditEvent } from "../store/audit_row.ts";
import { Admission } from "../browser/admission.ts";
import { BrowserSession } from "../browser/browser_session.ts";
import { OmotaiError, StaleRefError } from "../errors.ts";
import { allowAllGate, type Gate } from "../gate/gate.ts";
import { baseFacts } from "../policy/fact_builders.ts";
import type { ActionKind } from "../policy/facts.ts";
import { runTool } from "./pipeline.ts";
import { type AnyTool, defineTool } from "./tool.ts";

/** A session that is never launched, with a sink the test can read or break. */
async function world(loads?: Admission) {
  const dir = await Deno.makeTempDir({ prefix: "omotai-tool-test-" });
  const profiles = await ProfileStore.open(dir);
  const rows: AuditEvent[] = [];
  let broken = false;
  const session = new BrowserSession({
    profiles,
    executable: "/nonexistent",
    loads,
    audit: {
      append(e) {
        if (broken) throw new OmotaiError("AUDIT_UNAVAILABLE", "the audit cannot be written");
        rows.push(e);
      },
    },
  });
  return {
    session,
    rows,
    breakAudit: () => broken = true,
    async [Symbol.asyncDispose]() {
      await session[Symbol.asyncDispose]();
      await profiles[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const actionRows = (rows: AuditEvent[]) => rows.filter((r) => r.source === "action");

/** A tool whose steps log what they see, in order. */
function probe(kind: ActionKind, log: string[], rows?: AuditEvent[]): AnyTool {
  return defineTool({
    name: `probe_${kind}`,
    title: "probe",
    description: "test",
    schema: z.strictObject({ n: z.int().optional() }),
    kind,
    readOnly: false,
    destructive: false,
    resolve: () => {
      log.push("resolve");
      return Promise.resolve("target-1");
    },
    facts: (ctx, _args, target) => {
      log.push(`facts:${target}`);
      const facts = baseFacts(kind, ctx.session.state.counters());
      facts.target = { scheme: "https", origin: "https://a.test", path: "/x" };
      return Promise.resolve(facts);
    },
    handle: (ctx, _args, target) => {
      log.push(`handle:${target}:rows=${rows ? actionRows(rows).length : "?"}`);
      ctx.response.result("done");
      return Promise.resolve();
    },
  }) as unknown as AnyTool;
}

Deno.test("runTool() resolves once, reads facts, audits, then runs the handler", async () => {
  await using w = await world();
  const log: string[] = [];
  const r = await runTool(probe("navigate", log, w.rows), {}, {
    session: w.session,
    gate: allowAllGate,
  });
  assert.deepEqual(log, ["resolve", "facts:target-1", "handle:target-1:rows=1"]);
  assert.equal(r.content[0].text, "done");
  assert.deepEqual(actionRows(w.rows), [{
    kind: "navigate",
    source: "action",
    origin: "https://a.test",
    method: "GET",
    decision: "allow",
    reason: "OK",
    module: undefined,
    rule: undefined,
    session: w.session.id,
    agent: null,
  }]);
});

Deno.test("runTool() does not run an action whose audit row cannot be written", async () => {
  await using w = await world();
  const log: string[] = [];
  w.breakAudit();
  const r = await runTool(probe("click", log), {}, { session: w.session, gate: allowAllGate });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /^denied: AUDIT_UNAVAILABLE$/m);
  assert.ok(!log.some((l) => l.startsWith("handle")), log.join());
  assert.equal(w.session.state.counters().actionsUsed, 0);
});

Deno.test("runTool() counts allowed actions of counted kinds only", async () => {
  await using w = await world();
  const log: string[] = [];
  const deps = { session: w.session, gate: allowAllGate };
  await runTool(probe("navigate", log), {}, deps);
  await runTool(probe("click", log), {}, deps);
  await runTool(probe("snapshot", log), {}, deps);
  await runTool(probe("wait", log), {}, deps);
  assert.equal(w.session.state.counters().actionsUsed, 2);
  const denyAll: Gate = { check: () => Promise.resolve({ decision: "deny", reason: "NOPE" }) };
  const r = await runTool(probe("navigate", log), {}, { session: w.session, gate: denyAll });
  assert.match(r.content[0].text, /^denied: NOPE$/m);
  assert.equal(w.session.state.counters().actionsUsed, 2);
  assert.deepEqual(actionRows(w.rows).map((row) => row.decision), [
    "allow",
    "allow",
    "allow",
    "allow",
    "deny",
  ]);
});

Deno.test("runTool() hands the gate the facts it read and the session's identity", async () => {
  await using w = await world();
  w.session.agent = "agent-7";
  let seen: unknown;
  const gate: Gate = {
    check: (action) => {
      seen = {
        tool: action.tool,
        kind: action.kind,
        origin: action.facts.target?.origin,
        who: action.session,
      };
      return Promise.resolve({ decision: "allow", reason: "OK" });
    },
  };
  await runTool(probe("click", []), {}, { session: w.session, gate });
  assert.deepEqual(seen, {
    tool: "probe_click",
    kind: "click",
    origin: "https://a.test",
    who: { id: w.session.id, agent: "agent-7" },
  });
});

Deno.test("runTool() denies and audits when facts cannot be read; the handler never runs", async () => {
  await using w = await world();
  let handled = false;
  const stale = defineTool({
    name: "stale",
    title: "stale",
    description: "test",
    schema: z.strictObject({}),
    kind: "click",
    readOnly: false,
    destructive: true,
    facts: () => Promise.reject(new StaleRefError("ref e1 is stale; take a new snapshot")),
    handle: () => {
      handled = true;
      return Promise.resolve();
    },
  }) as unknown as AnyTool;
  const r = await runTool(stale, {}, { session: w.session, gate: allowAllGate });
  assert.match(r.content[0].text, /^error: STALE_REF/);
  assert.equal(handled, false);
  assert.deepEqual(actionRows(w.rows).map((row) => [row.decision, row.reason]), [[
    "deny",
    "STALE_REF",
  ]]);
  // An unknown error is audited as FACTS_UNAVAILABLE and told to the model as a code only.
  const boom = { ...stale, facts: () => Promise.reject(new Error("secret page text")) };
  const r2 = await runTool(boom, {}, { session: w.session, gate: allowAllGate });
  assert.equal(r2.content[0].text, "error: INTERNAL_ERROR (the action failed unexpectedly)");
  assert.equal(actionRows(w.rows).at(-1)?.reason, "FACTS_UNAVAILABLE");
});

Deno.test("runTool() refuses malformed arguments with INVALID_ARGUMENTS and an audit row", async () => {
  await using w = await world();
  const log: string[] = [];
  const r = await runTool(probe("click", log), { n: "x" }, {
    session: w.session,
    gate: allowAllGate,
  });
  assert.match(r.content[0].text, /^error: INVALID_ARGUMENTS \(probe_click: n: /);
  assert.deepEqual(log, []);
  assert.equal(actionRows(w.rows)[0].reason, "INVALID_ARGUMENTS");
});

Deno.test("runTool() opens the action's write hold around the handler, waits for it, and says what became of each write", async () => {
  await using w = await world();
  const events: string[] = [];
  const outcomes: HeldOutcome[] = [];
  const gate: Gate = {
    check: () =>
      Promise.resolve({
        decision: "allow",
        reason: "WRITE_HELD",
        module: "baseline",
        hold: {
          open: () => {
            events.push("open");
            return {
              outcomes,
              drain: () => {
                events.push("drain");
                return Promise.resolve();
              },
              close: () => events.push("close"),
            };
          },
        },
      }),
  };
  const tool = defineTool({
    name: "submit",
    title: "submit",
    description: "test",
    schema: z.strictObject({}),
    kind: "click",
    readOnly: false,
    destructive: true,
    facts: (ctx) => Promise.resolve(baseFacts("click", ctx.session.state.counters())),
    handle: () => {
      events.push("handle");
      outcomes.push(
        {
          method: "POST",
          origin: "https://a.test",
          kind: "form",
          decision: "allow",
          reason: "APPROVED",
        },
        {
          method: "POST",
          origin: "https://a.test",
          kind: "script",
          decision: "deny",
          reason: "SCRIPT_WRITE_REFUSED",
        },
      );
      return Promise.resolve();
    },
  }) as unknown as AnyTool;
  const r = await runTool(tool, {}, { session: w.session, gate });
  assert.deepEqual([events[0], events[1], events.at(-1)], ["open", "handle", "close"]);
  assert.ok(events.indexOf("drain") > 1 && events.indexOf("drain") < events.indexOf("close"));
  const text = r.content[0].text;
  assert.match(text, /^denied: SCRIPT_WRITE_REFUSED \(POST request to https:\/\/a\.test\)/);
  assert.match(text, /the operator approved the POST form to https:\/\/a\.test; sent once/);
  assert.equal(actionRows(w.rows)[0].reason, "WRITE_HELD");
});

Deno.test("runTool() judges every fact set of a multi-element call and runs only if all allow", async () => {
  await using w = await world();
  let handled = 0;
  const two = defineTool({
    name: "fill",
    title: "fill",
    description: "test",
    schema: z.strictObject({}),
    kind: "type",
    readOnly: false,
    destructive: true,
    facts: (ctx) =>
      Promise.resolve(["https://a.test", "https://b.test", "https://c.test"].map((origin) => ({
        ...baseFacts("type", ctx.session.state.counters()),
        target: { scheme: "https", origin, path: "/" },
      }))),
    handle: () => {
      handled++;
      return Promise.resolve();
    },
  }) as unknown as AnyTool;
  const denyB: Gate = {
    check: (a) =>
      Promise.resolve(
        a.facts.target?.origin === "https://b.test"
          ? { decision: "deny", reason: "NOT_B" }
          : { decision: "allow", reason: "OK" },
      ),
  };
  const r = await runTool(two, {}, { session: w.session, gate: denyB });
  assert.match(r.content[0].text, /^denied: NOT_B$/m);
  assert.equal(handled, 0);
  // Judging stops at the first refusal; each judged set has its row.
  assert.deepEqual(actionRows(w.rows).map((row) => [row.origin, row.reason]), [
    ["https://a.test", "OK"],
    ["https://b.test", "NOT_B"],
  ]);
  await runTool(two, {}, { session: w.session, gate: allowAllGate });
  assert.equal(handled, 1);
  assert.equal(w.session.state.counters().actionsUsed, 1);
});

Deno.test("runTool() runs a load in its turn among every session's loads; other actions do not wait; no turn is SERVER_BUSY", async () => {
  const loads = new Admission({
    slots: 1,
    maxWaitMs: 100,
    refusal: (waited) => new OmotaiError("SERVER_BUSY", `no turn within ${waited} ms`),
  });
  await using w = await world(loads);
  // Another session's load holds the one slot.
  let release!: () => void;
  const other = loads.run(() => new Promise<void>((r) => release = r));
  const log: string[] = [];
  const click = await runTool(probe("click", log), {}, { session: w.session, gate: allowAllGate });
  assert.equal(click.content[0].text, "done");
  assert.deepEqual(log, ["resolve", "facts:target-1", "handle:target-1:rows=?"]);
  log.length = 0;
  const waiting = runTool(probe("navigate", log), {}, { session: w.session, gate: allowAllGate });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(log, ["resolve", "facts:target-1"], "judged and audited, not yet run");
  assert.equal(loads.waiting, 1);
  release();
  await other;
  assert.equal((await waiting).content[0].text, "done");
  // No turn within the wait: the load never runs and the call says why.
  log.length = 0;
  const held = loads.run(() => new Promise<void>((r) => release = r));
  const before = w.session.state.counters().actionsUsed;
  const busy = await runTool(probe("back", log, w.rows), {}, {
    session: w.session,
    gate: allowAllGate,
  });
  assert.match(busy.content[0].text, /^error: SERVER_BUSY \(no turn within 100 ms\)/);
  assert.ok(!log.some((l) => l.startsWith("handle")), log.join());
  // Judged and allowed, then refused for the machine: both rows; no action used up.
  assert.deepEqual(actionRows(w.rows).slice(-2).map((r) => [r.decision, r.reason]), [
    ["allow", actionRows(w.rows).at(-2)!.reason],
    ["deny", "SERVER_BUSY"],
  ]);
  assert.equal(w.session.state.counters().actionsUsed, before);
  release();
  await held;
});
