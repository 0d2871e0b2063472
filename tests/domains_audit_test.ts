import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { databasePath } from "../runtime/store/database.ts";
import { eventually, type Harness, startHarness, type TestClient } from "./helpers/harness.ts";
import { runOmotai, runRuntime } from "./helpers/omotai_cli.ts";

/**
 * `omotai ARGS`, its stdout and stderr together: through the launcher when `launcher`, else
 * the runtime's own process as the launcher starts it (the same output and exit code).
 */
async function omotai(args: string[], launcher = false): Promise<{ code: number; out: string }> {
  const res = await (launcher ? runOmotai : runRuntime)(args);
  return { code: res.code, out: res.stdout + res.stderr };
}

/**
 * The runtime and session of the first two tests: the second drops the domain table, so it
 * runs last on it and ends it. What the first leaves (an allow rule for the other origin) is
 * no way to read the dropped table.
 */
let domainsStage: Promise<{ h: Harness; c: TestClient }> | undefined;
function theDomainsStage(): Promise<{ h: Harness; c: TestClient }> {
  domainsStage ??= (async () => {
    // Only the first fixture origin is in the policy file.
    const h = await startHarness((site) => `allowed_origins: [${site.origin}]\nread_only: true\n`);
    return { h, c: await h.connect() };
  })();
  return domainsStage;
}

/** A test on the shared runtime: it outlives the first test by design. */
function staged(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, fn, sanitizeOps: false, sanitizeResources: false });
}

staged(
  "omotai domain add/rm applies to the next action and request without a restart",
  async () => {
    const { h, c } = await theDomainsStage();
    const other = `${h.site.otherOrigin}/next`;
    assert.match(
      (await c.call("browser_navigate", { url: other })).text,
      /^denied: ORIGIN_NOT_ALLOWED/,
    );
    // The home page's cross-origin iframe is refused by the egress proxy for now.
    const start = (await h.runtime.audit.rows()).at(-1)!.seq;
    await c.call("browser_navigate", { url: `${h.site.origin}/` });
    assert.ok(
      (await h.runtime.audit.rows(start)).some((r) =>
        r.source === "proxy" && r.origin === h.site.otherOrigin && r.reason === "ORIGIN_NOT_ALLOWED"
      ),
    );

    // Spelled oddly on purpose: the rule is stored as the normalized origin.
    const upper = h.site.otherOrigin.replace("http://", "HTTP://") + "/x?q=1";
    let res = await omotai(["domain", "add", upper, "--allow", "--data-dir", h.dataDir], true);
    assert.equal(res.code, 0, res.out);
    assert.match(res.out, new RegExp(`allowed ${h.site.otherOrigin.replaceAll(".", "\\.")}`));
    assert.match(
      (await omotai(["domain", "list", "--data-dir", h.dataDir])).out,
      /allow +http:\/\/127\.0\.0\.2:/,
    );
    const allowed = await c.call("browser_navigate", { url: other });
    assert.equal(allowed.isError, false, allowed.text);
    assert.match(allowed.text, /# Next page/);
    const frameStart = (await h.runtime.audit.rows()).at(-1)!.seq;
    await c.call("browser_navigate", { url: `${h.site.origin}/` });
    assert.ok(
      await eventually(async () =>
        (await h.runtime.audit.rows(frameStart)).some((r) =>
          r.source === "proxy" && r.origin === h.site.otherOrigin && r.decision === "allow"
        )
      ),
      "the cross-origin iframe's request is allowed now",
    );

    // A deny wins over the policy file's own allow.
    res = await omotai(["domain", "add", h.site.origin, "--deny", "--data-dir", h.dataDir]);
    assert.equal(res.code, 0, res.out);
    const denied = await c.call("browser_navigate", { url: `${h.site.origin}/next` });
    assert.match(
      denied.text,
      /^denied: DOMAIN_DENIED \(http:\/\/127\.0\.0\.1:\d+ is denied by the operator\)/,
    );
    assert.equal((await omotai(["domain", "rm", h.site.origin, "--data-dir", h.dataDir])).code, 0);
    assert.equal(
      (await c.call("browser_navigate", { url: `${h.site.origin}/next` })).isError,
      false,
    );
    // Two refusals that change nothing, run at once.
    const [again, bad] = await Promise.all([
      omotai(["domain", "rm", h.site.origin, "--data-dir", h.dataDir]),
      omotai(["domain", "add", "javascript:alert(1)", "--allow", "--data-dir", h.dataDir]),
    ]);
    assert.equal(again.code, 1);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /BAD_ORIGIN/);
    assert.ok((await h.runtime.audit.rows()).some((r) => r.kind === "domains_changed"));
  },
);

staged(
  "an unreadable domain table denies every action and request with DOMAINS_UNREADABLE",
  async () => {
    await using stage = await theDomainsStage().then((s) => ({
      ...s,
      [Symbol.asyncDispose]: () => s.h[Symbol.asyncDispose](),
    }));
    const { h, c } = stage;
    assert.equal((await c.call("browser_navigate", { url: `${h.site.origin}/` })).isError, false);
    const other = new DatabaseSync(databasePath(h.dataDir));
    other.exec("DROP TABLE domain_rules");
    other.close();
    const r = await c.call("browser_navigate", { url: `${h.site.origin}/next` });
    assert.match(r.text, /^denied: DOMAINS_UNREADABLE/);
    const rows = await h.runtime.audit.rows();
    assert.ok(rows.some((row) => row.kind === "navigate" && row.reason === "DOMAINS_UNREADABLE"));
    assert.ok(
      !rows.some((row) =>
        row.kind === "navigate" && row.decision === "allow" &&
        row.seq > rows.findLast((x) => x.reason === "DOMAINS_UNREADABLE")!.seq
      ),
    );
  },
);

Deno.test("omotai audit verify passes on a real run, fails on an edit, and prune keeps it verifiable", async () => {
  let dataDir: string;
  {
    await using h = await startHarness();
    dataDir = h.dataDir;
    const c = await h.connect();
    await c.call("browser_navigate", { url: `${h.site.origin}/` });
    await c.call("browser_navigate", { url: "http://127.0.0.3:9/x?token=planted-query-secret" });
    const ok = await omotai(["audit", "verify", "--data-dir", h.dataDir]);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /audit ok: \d+ rows/);
    const rows = await h.runtime.audit.rows();
    assert.ok(
      rows.some((r) =>
        r.kind === "navigate" && r.decision === "deny" && r.reason === "ORIGIN_NOT_ALLOWED"
      ),
    );
    assert.ok(!JSON.stringify(rows).includes("planted-query-secret"));
    assert.ok(rows.some((r) => r.kind === "runtime_started"));
    assert.ok(rows.some((r) => r.kind === "browser_started"));
    const copy = `${h.dataDir}/copy`;
    await Deno.mkdir(copy);
    await c[Symbol.asyncDispose]();
    await h.runtime[Symbol.asyncDispose]();
    await Deno.copyFile(databasePath(h.dataDir), databasePath(copy));
    const pruned = await omotai(["audit", "prune", "--older-than", "0s", "--data-dir", copy]);
    assert.equal(pruned.code, 0, pruned.out);
    assert.match(pruned.out, /pruned \d+ rows/);
    const db = new DatabaseSync(databasePath(h.dataDir));
    db.exec("DROP TRIGGER audit_no_update");
    db.exec("UPDATE audit SET decision = 'allow' WHERE decision = 'deny'");
    db.close();
    // The pruned copy and the edited original are separate files: both are checked at once.
    const [prunedOk, broken] = await Promise.all([
      omotai(["audit", "verify", "--data-dir", copy]),
      omotai(["audit", "verify", "--data-dir", h.dataDir]),
    ]);
    assert.equal(prunedOk.code, 0, prunedOk.out);
    assert.equal(broken.code, 1);
    assert.match(broken.out, /audit BROKEN/);
    assert.match(broken.out, /contents do not match its hash/);
  }
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
});
