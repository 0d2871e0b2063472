/**
 * Generated-credential capture on the shared PostgreSQL store: two runtimes of one tenant, one
 * vault key, the policy's templates for a fake GitHub and a fake Linear (HTTPS, test CA).
 * Capture grants are added through the shared grant port (`Grants` over `PgGrantStore`); an agent on runtime
 * A captures a GitHub App and the tenant's vault, opened apart from either runtime, holds
 * exactly what the vendor minted, the grants read `used` through the port. Two agents, one
 * session on A and one on B, capture into the same targets: while A's capture holds its lease,
 * B's is refused `CAPTURE_IN_PROGRESS` and contacts no vendor; started at once, the vendor
 * registers one app (the leases are the tenant's, in the database). No minted value is in
 * the MCP stream, the log, either runtime's console API, the audit rows or any row of any
 * table of the database (read as its superuser).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { PgAuditLog } from "../runtime/store/pg_audit_log.ts";
import { PgAuditSink } from "../runtime/store/pg_audit_sink.ts";
import type { Runtime } from "../runtime/cli/start.ts";
import { Grants } from "../runtime/grants/mod.ts";
import { PgGrantStore } from "../runtime/store/pg_grant_store.ts";
import { rotateAdminToken } from "../runtime/store/pg_admin_token.ts";
import { PgDatabase } from "../runtime/store/pg_database.ts";
import { addTenant } from "../runtime/store/pg_tenants.ts";
import { PgVaultRecords } from "../runtime/store/pg_vault_records.ts";
import { Vault } from "../vault/mod.ts";
import {
  type FakeGithubOptions,
  serveFakeGithub,
  serveFakeLinear,
} from "./fixtures/capture_vendors.ts";
import {
  AgentClients,
  assertNoLeak,
  captureGrants,
  captureLogs,
  capturePolicy,
  consolePages,
  dashed,
  GITHUB_OUTPUTS,
  holdConversions,
  mintedSecrets,
  newVaultKey,
  revealSecret,
} from "./helpers/capture_world.ts";
import { eventually, startTestRuntime, type TestClient } from "./helpers/harness.ts";
import { startPostgres } from "./helpers/postgres.ts";
import { processRedactor } from "../runtime/redact/mod.ts";

const KEY = newVaultKey();
const TENANT = "acme";

Deno.test({
  name:
    "browser_capture_credentials on a shared store: a capture on A is in B's vault, a race across runtimes mints once, no value in any row",
  // The cluster, its pools and the runtimes are made and ended inside this test; the pools'
  // connections are opened and ended across its steps, so the sanitizers are off (as in
  // `clusterTeardown`).
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const { logs, restore } = captureLogs();
    const ghOptions: FakeGithubOptions = {};
    const cleanups: (() => PromiseLike<void>)[] = [];
    const clients = new AgentClients("shared-capture-test");
    const runtimes: (Runtime & { dataDir: string })[] = [];
    try {
      const pg = await startPostgres();
      cleanups.push(() => pg[Symbol.asyncDispose]());
      const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
      cleanups.push(() => owner[Symbol.asyncDispose]());
      await owner.migrate();
      await addTenant(owner, TENANT);
      const token = await rotateAdminToken(owner, TENANT);
      // The operator's side: the tenant's grants and vault as `omotai grant/secret` reach them.
      const app = await PgDatabase.open({ url: pg.appUrl });
      cleanups.push(() => app[Symbol.asyncDispose]());
      const sink = new PgAuditSink(new PgAuditLog(app, TENANT, { redactor: processRedactor() }));
      cleanups.push(() => sink[Symbol.asyncDispose]());
      const records = new PgVaultRecords(app, TENANT);
      const grants = new Grants(new PgGrantStore(app, TENANT), {
        audit: { append: (e) => sink.appendSoon(e) },
        secrets: { has: (id) => Vault.has(records, id) },
      });

      const github = await serveFakeGithub(ghOptions);
      cleanups.push(() => github[Symbol.asyncDispose]());
      const linear = await serveFakeLinear();
      cleanups.push(() => linear[Symbol.asyncDispose]());
      const policy = capturePolicy({
        github,
        linear,
        name: "Omotai shared capture test",
        permissions: { issues: "write" },
      });
      /** A runtime of the tenant, in this process, with the tenant's vault key. */
      const runtimeOf = async (name: string) => {
        const dataDir = await Deno.makeTempDir({ prefix: `omotai-shared-capture-${name}-` });
        try {
          const rt = Object.assign(
            await startTestRuntime(dataDir, policy, {
              database: pg.appUrl,
              tenant: TENANT,
              vaultKey: { key: KEY },
              isolation: { mode: "off" },
              upstreamCa: [github.caPem, linear.caPem],
            }),
            { dataDir },
          );
          runtimes.push(rt);
          return rt;
        } catch (err) {
          await Deno.remove(dataDir, { recursive: true }).catch(() => {});
          throw err;
        }
      };
      const a = await runtimeOf("a");
      const b = await runtimeOf("b");
      // Agent keys are the tenant's: added on A, they open sessions on B too.
      const keys: Record<string, string> = {};
      for (const agent of ["alice", "bob", "carol"]) keys[agent] = (await a.agents.add(agent)).key;
      const connect = (runtime: Runtime, agent: string) => clients.connect(runtime, keys[agent]);
      /**
       * Bob's session on A and Carol's on B, opened by the first race and raced again in the
       * second (a browser launch each saved): a tainted session still captures and reports
       * (tests/capture_attack_test.ts), and each race names its own targets.
       */
      let racers: Promise<[TestClient, TestClient]> | undefined;
      const racing = () => racers ??= Promise.all([connect(a, "bob"), connect(b, "carol")]);
      /** One approved `once` capture grant per output of github_app, through the PG port. */
      const grantCapture = captureGrants(grants, {
        origins: { github_app: github.origin, linear_oauth_app: linear.origin },
        purpose: "shared capture test",
        prefix: "cap",
      });
      const grant = (agent: string, target: (output: string) => string) =>
        grantCapture("github_app", GITHUB_OUTPUTS, { agent, target });
      /** The tenant's vault opened apart from both runtimes, with the key. */
      const reveal = (id: string) => revealSecret(records, KEY, id);

      await t.step("a capture on runtime A: the tenant's vault holds what was minted", async () => {
        const { ids, targets } = await grant("alice", (o) => `cap-alice-${dashed(o)}`);
        const ca = await connect(a, "alice");
        const out = await ca.call("browser_capture_credentials", {
          workflow: "github_app",
          outputs: ids,
        });
        assert.equal(out.isError, false, out.text);
        assert.match(out.text, /^capture: CAPTURE_DONE/);
        for (const o of GITHUB_OUTPUTS) assert.ok(out.text.includes(targets[o]), out.text);
        assert.equal(github.minted.length, 1);
        assert.equal(github.conversions, 1);
        const minted = github.minted[0];
        assert.equal(await reveal(targets.pem), minted.pem);
        assert.equal(await reveal(targets.client_secret), minted.client_secret);
        assert.equal(await reveal(targets.webhook_secret), minted.webhook_secret);
        for (const id of Object.values(ids)) {
          const g = await grants.get(id);
          assert.equal(g?.state, "used", `${id} is used`);
        }
        // The grants are the tenant's: runtime B's own API reads them used too.
        const listed = await fetch(`${b.url}/api/grants`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        const seen = await listed.json() as { id: string; state: string }[];
        assert.equal(listed.status, 200);
        for (const id of Object.values(ids)) {
          assert.equal(seen.find((g) => g.id === id)?.state, "used", `B reads ${id} used`);
        }
      });

      await t.step(
        "a capture on B into targets a capture on A is minting into: CAPTURE_IN_PROGRESS, the vendor contacted zero times",
        async () => {
          const onA = await grant("bob", (o) => o === "pem" ? "race-pem" : `race-a-${dashed(o)}`);
          const onB = await grant("carol", (o) => o === "pem" ? "race-pem" : `race-b-${dashed(o)}`);
          const [ca, cb] = await racing();
          const minted = github.minted.length;
          const hold = holdConversions(ghOptions);
          let first;
          try {
            first = ca.call("browser_capture_credentials", {
              workflow: "github_app",
              outputs: onA.ids,
            });
            await Promise.race([
              hold.reached,
              first.then((o) => assert.fail(`A's capture ended early: ${o.text}`)),
            ]);
            const seen = github.requests.length;
            const second = await cb.call("browser_capture_credentials", {
              workflow: "github_app",
              outputs: onB.ids,
            });
            assert.equal(second.isError, true, second.text);
            assert.match(
              second.text,
              /^error: CAPTURE_IN_PROGRESS \(capture: CAPTURE_IN_PROGRESS \(another capture is writing into race-pem; nothing was submitted/,
            );
            assert.equal(github.requests.length, seen, "B contacted the vendor zero times");
          } finally {
            hold.open();
          }
          const done = await first;
          assert.equal(done.isError, false, done.text);
          assert.equal(github.minted.length, minted + 1, "the vendor registered exactly one app");
          const won = github.minted[minted];
          assert.equal(await reveal("race-pem"), won.pem);
          assert.equal(await reveal(onA.targets.client_secret), won.client_secret);
          for (const id of Object.values(onA.ids)) {
            assert.equal((await grants.get(id))?.state, "used");
          }
          for (const o of ["client_secret", "webhook_secret"]) {
            assert.equal(await Vault.has(records, onB.targets[o]), false, `${o} not written`);
          }
          for (const id of Object.values(onB.ids)) {
            assert.equal((await grants.get(id))?.state, "active", "B consumed nothing");
          }
        },
      );

      await t.step(
        "agents on A and on B start captures into the same empty targets at once: the vendor registers one app",
        async () => {
          const targets = (o: string) => `both-${dashed(o)}`;
          const onA = await grant("bob", targets);
          const onB = await grant("carol", targets);
          const [ca, cb] = await racing();
          const minted = github.minted.length;
          const manifests = github.manifests.length;
          const outs = await Promise.all([
            ca.call("browser_capture_credentials", { workflow: "github_app", outputs: onA.ids }),
            cb.call("browser_capture_credentials", { workflow: "github_app", outputs: onB.ids }),
          ]);
          const texts = outs.map((o) => o.text).join("\n");
          const done = outs.filter((o) => !o.isError);
          const refused = outs.filter((o) => o.isError);
          assert.equal(done.length, 1, texts);
          assert.equal(refused.length, 1, texts);
          // Refused before the vendor: while the winner ran (its lease), or after it wrote.
          assert.match(
            refused[0].text,
            /^error: (CAPTURE_IN_PROGRESS|CAPTURE_TARGET_OCCUPIED) /,
          );
          assert.equal(github.manifests.length, manifests + 1, "one manifest posted");
          assert.equal(github.minted.length, minted + 1, "the vendor registered exactly one app");
          assert.equal(await reveal(targets("pem")), github.minted[minted].pem);
        },
      );

      await t.step("the leak search: no minted value in any output, row or log", async () => {
        // The test's own grant rows are kept before the database is read.
        await sink.flush();
        // Everything the cluster holds, read as its superuser (row-level security bypassed).
        const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
        let dump: string[];
        let audit: string;
        try {
          const tables = await su<{ schema: string; name: string }[]>`
            SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
            WHERE table_type = 'BASE TABLE'
              AND table_schema NOT IN ('pg_catalog', 'information_schema')
            ORDER BY 1, 2`;
          const names = tables.map((r) => r.name);
          for (const want of ["audit_events", "grants", "vault_secrets", "vault_meta"]) {
            assert.ok(names.includes(want), `the dump reads ${want}`);
          }
          // The runtimes' sinks write in batches: the rows of both captures are kept soon.
          const readAudit = () =>
            su<Record<string, unknown>[]>`
              SELECT * FROM audit_events WHERE tenant_id = ${TENANT} ORDER BY seq`;
          const count = (rows: Record<string, unknown>[], reason: string) =>
            rows.filter((r) => r.reason === reason).length;
          // The audit has the captures' story: both outcomes and each write.
          assert.ok(
            await eventually(async () => {
              const rows = await readAudit();
              return count(rows, "CAPTURE_DONE") === 3 &&
                count(rows, "CAPTURE_IN_PROGRESS") >= 1 &&
                count(rows, "CAPTURE_WRITE_FAILED") === 0 &&
                count(rows, "CAPTURE_WRITTEN") === 9;
            }),
            "the audit holds 3 CAPTURE_DONE, a CAPTURE_IN_PROGRESS, no CAPTURE_WRITE_FAILED, 9 CAPTURE_WRITTEN",
          );
          audit = JSON.stringify(await readAudit());
          dump = [];
          for (const { schema, name } of tables) {
            const rows = await su.unsafe<{ row: string }[]>(
              `SELECT row_to_json(t)::text AS row FROM "${schema}"."${name}" t`,
            );
            dump.push(`${schema}.${name}\n${rows.map((r) => r.row).join("\n")}`);
          }
        } finally {
          await su.end();
        }
        // The dump did read the vault's rows (sealed): a value kept there in clear would show.
        assert.ok(dump.some((d) => d.startsWith("public.vault_secrets") && d.includes("race-pem")));
        assert.ok(
          dump.some((d) => d.startsWith("public.grants") && d.includes("shared capture test")),
        );
        // What the console API of either runtime shows.
        const pages: string[] = [];
        for (const rt of [a, b]) {
          pages.push(
            ...await consolePages(rt, token, [
              "/api/sessions",
              "/api/audit",
              "/api/audit/export",
              "/api/grants",
            ]),
          );
        }
        assert.ok(pages.join("").includes("race-pem"), "the console shows the captures");
        assertNoLeak({
          values: mintedSecrets(github.minted),
          places: [
            ["the console API", pages.join("\n")],
            ["the MCP stream", clients.stream()],
            ["the log", logs.join("\n")],
            ["the audit rows", audit],
            ["the database's rows", dump.join("\n")],
          ],
          atLeast: 15,
        });
      });
    } finally {
      restore();
      await clients[Symbol.asyncDispose]();
      for (const rt of runtimes) {
        await rt[Symbol.asyncDispose]();
        await Deno.remove(rt.dataDir, { recursive: true }).catch(() => {});
      }
      for (const cleanup of cleanups.reverse()) await cleanup();
    }
  },
});
