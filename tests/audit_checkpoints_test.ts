/**
 * Signed audit checkpoints end to end, through `omotai` as users run it (the launcher and
 * the permissions it works out): a runtime signs its chain's head while it runs and when it
 * stops; `omotai audit verify --checkpoints` passes on the real chain and catches a history
 * rewritten and re-hashed by whoever holds the database, in the embedded SQLite store and
 * in PostgreSQL (`omotai tenant add|list`, `--database`), where the forger is the superuser.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AuditRow } from "../runtime/store/audit_row.ts";
import {
  CHECKPOINT_FILE,
  CHECKPOINT_PUB_FILE,
  Checkpointer,
} from "../runtime/audit/checkpointer.ts";
import { exportCheckpointKey, generateCheckpointKey } from "../runtime/audit/checkpoint.ts";
import { PgAuditLog } from "../runtime/store/pg_audit_log.ts";
import { PgAgentStore } from "../runtime/store/pg_agent_store.ts";
import { launcherFlags } from "../runtime/launcher/launcher.ts";
import { databasePath } from "../runtime/store/database.ts";
import { PgDatabase } from "../runtime/store/pg_database.ts";
import { forgeFrom } from "./helpers/audit_forgery.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { serveFixtureSite } from "./fixtures/site.ts";
import { agentTransport, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { clusterTeardown, startPostgres } from "./helpers/postgres.ts";
import { addTenant } from "../runtime/store/pg_tenants.ts";
import { processRedactor } from "../runtime/redact/mod.ts";

// One throwaway cluster for the PostgreSQL cases: each works in tenants of its own (acme and
// globex; initech), and the superuser's rewrites touch only the case's own tenant.
const pg = await startPostgres();

const MAIN = join(fileURLToPath(new URL("..", import.meta.url)), "runtime", "main.ts");
const decoder = new TextDecoder();

/** `omotai ARGS` through the launcher, from `/`, with only `env`. */
async function omotai(args: string[], env: Record<string, string> = {}) {
  const res = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...launcherFlags(Deno.execPath()), MAIN, ...args],
    cwd: "/",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/root", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = decoder.decode(res.stdout);
  return { code: res.code, stdout, out: stdout + decoder.decode(res.stderr) };
}

Deno.test("omotai audit verify --checkpoints: a runtime's signed heads pass, a re-hashed rewrite of its SQLite audit fails", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-checkpoints-" });
  {
    await using site = serveFixtureSite();
    await using runtime = await startTestRuntime(dataDir, `allowed_origins: [${site.origin}]\n`);
    const client = new Client({ name: "checkpoints-test", version: "0" });
    await client.connect(await agentTransport(runtime, "http"));
    await using c = new TestClient(client);
    await c.call("browser_navigate", { url: `${site.origin}/` });
    await c.call("browser_navigate", { url: "http://127.0.0.3:9/x" });
  } // the runtime stopped: its last checkpoint covers runtime_stopped
  try {
    const file = join(dataDir, CHECKPOINT_FILE);
    const ok = await omotai(["audit", "verify", "--data-dir", dataDir, "--checkpoints", file]);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /[1-9]\d* signed checkpoints of tenant default checked/);
    assert.match(ok.out, /audit ok/);
    // The key's private half is the runtime's alone.
    assert.equal((await Deno.stat(join(dataDir, "audit-checkpoint.key"))).mode! & 0o077, 0);

    // Whoever holds the database file rewrites a deny into an allow and re-hashes the rest.
    const db = new DatabaseSync(databasePath(dataDir));
    db.exec("DROP TRIGGER audit_no_update");
    const rows = db.prepare("SELECT * FROM audit ORDER BY seq").all()
      .map((r) => ({ ...r })) as unknown as AuditRow[];
    const target = rows.find((r) => r.decision === "deny")!;
    const update = db.prepare(
      "UPDATE audit SET decision = ?, prev_hash = ?, hash = ? WHERE seq = ?",
    );
    const forged = forgeFrom(rows, target.seq);
    for (const r of forged) update.run(r.decision, r.prev_hash, r.hash, r.seq);
    db.prepare("UPDATE audit_state SET head_hash = ? WHERE id = 1").run(forged.at(-1)!.hash);
    db.close();

    // Checkpoints signed by another key prove nothing, and say so.
    const other = await Deno.makeTempDir({ prefix: "omotai-other-key-" });
    // Three reads of the same files, run at once.
    const [plain, caught, foreign] = await Promise.all([
      omotai(["audit", "verify", "--data-dir", dataDir]),
      omotai(["audit", "verify", "--data-dir", dataDir, "--checkpoints", file]),
      Deno.writeTextFile(`${other}/k.pub`, exportCheckpointKey(generateCheckpointKey()).public)
        .then(() =>
          omotai([
            "audit",
            "verify",
            "--data-dir",
            dataDir,
            "--checkpoints",
            file,
            "--checkpoint-key",
            `${other}/k.pub`,
          ])
        ).finally(() => Deno.remove(other, { recursive: true })),
    ]);
    assert.equal(plain.code, 0, `the chain alone cannot tell: ${plain.out}`);
    assert.equal(caught.code, 1, caught.out);
    assert.match(caught.out, /audit BROKEN/);
    assert.match(caught.out, /is not the row that was signed; the history was rewritten/);
    assert.equal(foreign.code, 1);
    assert.match(foreign.out, /not signed by this key/);
  } finally {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("omotai tenant, agent and audit verify --database: tenants made by the owner, agents in one tenant; a superuser's re-hashed rewrite of one tenant's chain is caught by its checkpoints", async () => {
  const env = { OMOTAI_DATABASE_URL: pg.ownerUrl };
  // The URL from the environment; the launcher grants its host and port only.
  const added = await omotai(["tenant", "add", "acme"], env);
  assert.equal(added.code, 0, added.out);
  // Steps that do not depend on each other run at once (each is a process of its own).
  const [globex, dup] = await Promise.all([
    omotai(["tenant", "add", "globex", "--database", pg.ownerUrl]),
    omotai(["tenant", "add", "acme"], env),
  ]);
  assert.equal(globex.code, 0, globex.out);
  assert.equal(dup.code, 1);
  assert.match(dup.out, /BAD_TENANT: tenant acme exists/);
  // Agents belong to one tenant; each tenant lists only its own.
  const [listed, agent] = await Promise.all([
    omotai(["tenant", "list"], env),
    omotai(["agent", "add", "ada", "--tenant", "acme"], env),
  ]);
  assert.match(listed.out, /^acme {2}created .*\nglobex {2}created /m);
  assert.ok(!listed.out.includes(pg.ownerUrl.split("@")[0]), "no password printed");
  assert.equal(agent.code, 0, agent.out);
  const key = agent.stdout.trim().split("\n").at(-1)!;
  assert.match(key, /^omk_/);
  const [acmeAgents, globexAgents] = await Promise.all([
    omotai(["agent", "list", "--tenant", "acme"], env),
    omotai(["agent", "list", "--tenant", "globex"], env),
  ]);
  assert.match(acmeAgents.out, /^ada {2}policy/m);
  assert.match(globexAgents.out, /^no agents$/m);
  {
    await using app = await PgDatabase.open({ url: pg.appUrl });
    assert.equal((await new PgAgentStore(app, "globex").verify(key))?.tenant, "acme");
  }

  const dir = await Deno.makeTempDir({ prefix: "omotai-pg-checkpoints-" });
  try {
    const key = generateCheckpointKey();
    await Deno.writeTextFile(join(dir, CHECKPOINT_PUB_FILE), exportCheckpointKey(key).public);
    const file = join(dir, CHECKPOINT_FILE);
    {
      await using app = await PgDatabase.open({ url: pg.appUrl });
      const acme = new PgAuditLog(app, "acme", { redactor: processRedactor() });
      await using signer = new Checkpointer({
        store: acme,
        key,
        runtime: "rt-a",
        file,
        log: () => {},
      });
      for (let i = 0; i < 6; i++) {
        await acme.append([{
          kind: "navigate",
          source: "action",
          decision: i % 2 ? "deny" : "allow",
          reason: "X",
        }]);
        if (i === 3) await signer.checkpoint();
      }
    }
    const verify = (more: string[] = []) =>
      omotai(["audit", "verify", "--tenant", "acme", ...more], env);
    const withKey = ["--checkpoints", file, "--checkpoint-key", join(dir, CHECKPOINT_PUB_FILE)];
    const ok = await verify(withKey);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /2 signed checkpoints of tenant acme checked/);
    assert.match(ok.out, /audit ok: 6 rows/);

    // The superuser turns every trigger off and rewrites row 2 and every hash after it.
    await using root = await PgDatabase.open({ url: pg.superUrl }, "owner");
    await root.transaction(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      const rows = (await tx<Record<string, unknown>[]>`
        SELECT seq, ts, session, agent, kind, source, origin, method, decision, reason, module,
          rule, prev_hash, hash FROM audit_events WHERE tenant_id = 'acme' ORDER BY seq`)
        .map((r) => ({ ...r, seq: Number(r.seq) })) as unknown as AuditRow[];
      const forged = forgeFrom(rows, 2);
      for (const r of forged) {
        await tx`UPDATE audit_events SET decision = ${r.decision}, prev_hash = ${r.prev_hash},
          hash = ${r.hash} WHERE tenant_id = 'acme' AND seq = ${r.seq}`;
      }
      await tx`UPDATE audit_heads SET head_hash = ${forged.at(-1)!.hash} WHERE tenant_id = 'acme'`;
    });
    // The chain alone cannot tell (what `omotai audit verify` without --checkpoints reads: the
    // CLI path itself is the globex run below).
    {
      await using app = await PgDatabase.open({ url: pg.appUrl });
      const plain = await new PgAuditLog(app, "acme", { redactor: processRedactor() }).verify();
      assert.ok(plain.ok, `the chain alone cannot tell: ${plain.problems.join("; ")}`);
    }
    const [caught, other] = await Promise.all([
      verify(withKey),
      omotai(["audit", "verify", "--tenant", "globex"], env),
    ]);
    assert.equal(caught.code, 1, caught.out);
    assert.match(caught.out, /checkpoint at row 4 .*the history was rewritten/);
    assert.match(caught.out, /checkpoint at row 6 .*the history was rewritten/);
    // The other tenant's chain is untouched and verifies.
    assert.match(other.out, /audit ok: 0 rows/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("omotai audit verify --checkpoints A B --checkpoint-key PA PB: a tenant's chain is held against every runtime's file at once", async () => {
  const env = { OMOTAI_DATABASE_URL: pg.ownerUrl };
  // `omotai tenant add` itself is the case above's.
  {
    await using owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
    await owner.migrate();
    await addTenant(owner, "initech");
  }
  const dir = await Deno.makeTempDir({ prefix: "omotai-pg-two-signers-" });
  try {
    // Two runtimes of initech, each with its own key and file, appending to one chain.
    const signers = ["rt-a", "rt-b"].map((runtime) => ({
      runtime,
      key: generateCheckpointKey(),
      file: join(dir, runtime, CHECKPOINT_FILE),
      pub: join(dir, runtime, CHECKPOINT_PUB_FILE),
    }));
    for (const s of signers) {
      await Deno.mkdir(join(dir, s.runtime));
      await Deno.writeTextFile(s.pub, exportCheckpointKey(s.key).public);
    }
    {
      await using app = await PgDatabase.open({ url: pg.appUrl });
      const initech = new PgAuditLog(app, "initech", { redactor: processRedactor() });
      await using a = new Checkpointer({ store: initech, ...signers[0], log: () => {} });
      await using b = new Checkpointer({ store: initech, ...signers[1], log: () => {} });
      for (let i = 0; i < 6; i++) {
        await initech.append([{
          kind: "navigate",
          source: "action",
          decision: "allow",
          reason: "X",
        }]);
        if (i === 1) await a.checkpoint();
        if (i === 3) await b.checkpoint();
      }
    }
    const verify = (more: string[]) =>
      omotai(["audit", "verify", "--tenant", "initech", "--checkpoints", ...more], env);
    const [fa, fb] = signers.map((s) => s.file);
    const [pa, pb] = signers.map((s) => s.pub);

    // Three reads of the untouched chain, run at once.
    const [ok, swapped, short] = await Promise.all([
      verify([fa, fb, "--checkpoint-key", pa, pb]),
      verify([fa, fb, "--checkpoint-key", pb, pa]),
      verify([fa, fb, "--checkpoint-key", pa]),
    ]);
    assert.equal(ok.code, 0, ok.out);
    assert.match(
      ok.out,
      new RegExp(`\\d+ signed checkpoints of tenant initech checked \\(${fa}\\)`),
    );
    assert.match(
      ok.out,
      new RegExp(`\\d+ signed checkpoints of tenant initech checked \\(${fb}\\)`),
    );
    assert.match(ok.out, /audit ok: 6 rows/);

    // Each file with the other runtime's key: every checkpoint is foreign, named by its file.
    assert.equal(swapped.code, 1, swapped.out);
    assert.match(swapped.out, new RegExp(`${fa}: checkpoint at row \\d+ .*not signed by this key`));
    assert.match(swapped.out, new RegExp(`${fb}: checkpoint at row \\d+ .*not signed by this key`));

    // A key short: refused before anything is read as checked.
    assert.notEqual(short.code, 0);
    assert.match(short.out, /BAD_OPTION: give one --checkpoint-key per --checkpoints file/);

    // The superuser rewrites the chain after row 1 and re-hashes it: both files catch it.
    await using root = await PgDatabase.open({ url: pg.superUrl }, "owner");
    await root.transaction(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      const rows = (await tx<Record<string, unknown>[]>`
        SELECT seq, ts, session, agent, kind, source, origin, method, decision, reason, module,
          rule, prev_hash, hash FROM audit_events WHERE tenant_id = 'initech' ORDER BY seq`)
        .map((r) => ({ ...r, seq: Number(r.seq) })) as unknown as AuditRow[];
      const forged = forgeFrom(rows, 1);
      for (const r of forged) {
        await tx`UPDATE audit_events SET decision = ${r.decision}, prev_hash = ${r.prev_hash},
          hash = ${r.hash} WHERE tenant_id = 'initech' AND seq = ${r.seq}`;
      }
      await tx`UPDATE audit_heads SET head_hash = ${
        forged.at(-1)!.hash
      } WHERE tenant_id = 'initech'`;
    });
    const caught = await verify([fa, fb, "--checkpoint-key", pa, pb]);
    assert.equal(caught.code, 1, caught.out);
    assert.match(
      caught.out,
      new RegExp(`${fa}: checkpoint at row \\d+ .*the history was rewritten`),
    );
    assert.match(
      caught.out,
      new RegExp(`${fb}: checkpoint at row \\d+ .*the history was rewritten`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(clusterTeardown("audit checkpoints", pg));
