/**
 * `performCapture`'s lease, over the real embedded stores (grants and capture leases in one
 * SQLite database in memory), up to the vendor's door: the workflow's first step is where a
 * vendor would be contacted, and the page stands in for it (any use of it is recorded). A
 * capture into a target another capture holds is `CAPTURE_IN_PROGRESS` before its grants are
 * checked; a lease store that cannot answer refuses the capture; a lease that lapsed stops the
 * workflow before its first step; every lease taken is let go.
 */
import assert from "node:assert/strict";
import type { CdpSession } from "../../cdp/mod.ts";
import { Grants } from "../grants/mod.ts";
import { SqliteGrantStore } from "../store/sqlite_grant_store.ts";
import type { RuntimeWriteHold } from "../login/login_flow.ts";
import { CaptureTemplatesSchema } from "../policy/capture_templates.ts";
import { CAPTURE_LEASE_TTL_MS, CaptureLeases } from "../store/capture_lease_store.ts";
import { openDatabase } from "../store/database.ts";
import { SqliteCaptureLeaseRows } from "../store/sqlite_capture_leases.ts";
import { type CaptureAuditRow, type CaptureDeps, performCapture } from "./capture_flow.ts";

const OUTPUTS = ["pem", "client_secret", "webhook_secret"] as const;
const TEMPLATES = CaptureTemplatesSchema.parse({
  github_app: {
    manifest: {
      name: "lease test",
      url: "https://example.test",
      hook_attributes: { url: "https://example.test/hooks" },
    },
  },
});

/** A world: the stores, a clock a test moves, what the capture audited and did to the page. */
async function world() {
  const db = openDatabase(":memory:");
  const grants = new Grants(new SqliteGrantStore(db), {
    audit: { append() {} },
    secrets: { has: () => false },
  });
  let skew = 0;
  const now = () => Date.now() + skew;
  const leases = new CaptureLeases(new SqliteCaptureLeaseRows(db, now), { runtime: "rt", now });
  const ids: Record<string, string> = {};
  for (const output of OUTPUTS) {
    ids[output] = (await grants.add({
      secret_id: `gh.${output.replace(/_/g, "-")}`,
      agent: "alice",
      purpose: "lease test",
      mode: "once",
      expires: "1h",
      uses: [{
        kind: "capture",
        allowed_origins: ["https://github.com"],
        workflow: "github_app",
        output,
      }],
    }, { approve: true })).id;
  }
  const audit: CaptureAuditRow[] = [];
  const touched: string[] = [];
  const page = new Proxy({}, {
    get(_, key) {
      touched.push(String(key));
      return undefined;
    },
  }) as CdpSession;
  let checks = 0;
  const deps: CaptureDeps = {
    grants: {
      get: (id) => grants.get(id),
      checkCapture: (request, at) => {
        checks++;
        return grants.checkCapture(request, at);
      },
      consumeCapture: (id, request, at) => grants.consumeCapture(id, request, at),
    },
    leases,
    vault: { addIfAbsent: () => Promise.reject(new Error("no value is written here")) },
    templates: TEMPLATES,
    openWrite: () => () => ({ close: () => undefined } as unknown as RuntimeWriteHold),
    confine() {},
    guard() {},
    audit: (row) => audit.push(row),
  };
  const run = () =>
    performCapture(page, {
      agent: "alice",
      sessionId: "s-1",
      workflow: "github_app",
      outputs: ids,
    }, deps);
  return {
    db,
    deps,
    leases,
    run,
    audit,
    touched,
    checks: () => checks,
    skew: (ms: number) => skew = ms,
    [Symbol.dispose]: () => db.close(),
  };
}

Deno.test("performCapture: a target another capture holds is CAPTURE_IN_PROGRESS, before any grant is checked or the vendor contacted", async () => {
  using w = await world();
  const other = await w.leases.acquire(["gh.webhook-secret"], "s-0");
  assert.equal(other.kind, "held");
  const out = await w.run();
  assert.equal(out.status, "CAPTURE_IN_PROGRESS");
  assert.match(
    out.message,
    /another capture is writing into gh\.webhook-secret; nothing was submitted/,
  );
  assert.deepEqual(out.written, []);
  assert.equal(w.checks(), 0, "no grant checked");
  assert.deepEqual(w.touched, [], "the page untouched");
  assert.deepEqual(w.audit.at(-1), {
    origin: "https://github.com",
    decision: "deny",
    reason: "CAPTURE_IN_PROGRESS",
    rule: w.audit.at(-1)!.rule,
  });
  assert.match(w.audit.at(-1)!.rule!, /^gh\.webhook-secret held by session s-0 on rt until /);
  // Nothing of the refused capture's set was taken: its other targets are free.
  const free = await w.leases.acquire(["gh.pem", "gh.client-secret"], "s-2");
  assert.equal(free.kind, "held");
  if (free.kind === "held") await free.release();
  if (other.kind === "held") await other.release();
});

Deno.test("performCapture: a lease store that cannot answer refuses the capture (CAPTURE_UNAVAILABLE), nothing checked or contacted", async () => {
  using w = await world();
  w.deps.leases = { acquire: () => Promise.reject(new Error("down")) };
  const out = await w.run();
  assert.equal(out.status, "CAPTURE_UNAVAILABLE");
  assert.match(out.message, /nothing was submitted/);
  assert.equal(w.checks(), 0);
  assert.deepEqual(w.touched, []);
  assert.equal(w.audit.at(-1)?.reason, "CAPTURE_UNAVAILABLE");
});

Deno.test("performCapture: a lease that lapsed stops the workflow before its first step (CAPTURE_LEASE_LOST), and its rows are let go", async () => {
  using w = await world();
  const acquire = w.deps.leases.acquire.bind(w.deps.leases);
  // The capture's clock passes its lease's TTL without a renewal right after it was taken.
  w.deps.leases = {
    acquire: async (targets, holder) => {
      const lease = await acquire(targets, holder);
      w.skew(CAPTURE_LEASE_TTL_MS + 1);
      return lease;
    },
  };
  const out = await w.run();
  assert.equal(out.status, "CAPTURE_LEASE_LOST", out.message);
  assert.equal(w.checks(), 1, "the grants were checked under the lease");
  assert.deepEqual(w.touched, [], "the vendor was not contacted");
  assert.deepEqual(w.audit.filter((r) => r.reason === "CAPTURE_STEP"), []);
  assert.equal(w.audit.at(-1)?.reason, "CAPTURE_LEASE_LOST");
  const after = await w.leases.acquire(["gh.pem", "gh.client-secret", "gh.webhook-secret"], "s-2");
  assert.equal(after.kind, "held");
  if (after.kind === "held") await after.release();
});

Deno.test("performCapture: a capture that ends lets its lease go: the same capture can lease again", async () => {
  using w = await world();
  // The page is no browser: the workflow's first use of it fails, after leasing and checking.
  const out = await w.run();
  assert.equal(out.status, "CAPTURE_FAILED", out.message);
  assert.equal(w.audit.filter((r) => r.reason === "CAPTURE_STEP").length, 1);
  assert.equal(w.checks(), 1);
  const again = await w.leases.acquire(["gh.pem"], "s-2");
  assert.equal(again.kind, "held");
  if (again.kind === "held") await again.release();
});
