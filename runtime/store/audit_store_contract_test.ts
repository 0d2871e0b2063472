/**
 * One contract for every `AuditStore`: the embedded SQLite log and PostgreSQL (a throwaway
 * cluster from Debian's `postgresql`, reached as the runtime's non-owner role under
 * row-level security). Each case runs against both.
 */
import assert from "node:assert/strict";
import { REDACTED, Redactor } from "../redact/mod.ts";
import { openDatabase } from "./database.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { SqliteAuditLog } from "./sqlite_audit_log.ts";
import { type AuditEvent, type AuditRow, GENESIS_HASH } from "./audit_row.ts";
import { forgeFrom } from "../../tests/helpers/audit_forgery.ts";
import type { AuditStore } from "./audit_store.ts";
import { sqliteAuditStore } from "./sqlite_audit_store.ts";
import { Checkpointer, readCheckpoints } from "../audit/checkpointer.ts";
import { checkpointCheck, generateCheckpointKey } from "../audit/checkpoint.ts";
import { PgAuditLog, tenantGenesis } from "./pg_audit_log.ts";

const SECRET = "Contract-Planted-Secret-91f2";

interface Adapter {
  name: string;
  /** A fresh, empty store; `tamper` changes a stored row behind the store's back. */
  open(redactor: Redactor): Promise<
    {
      store: AuditStore;
      genesis: string;
      tamper(seq: number): Promise<void>;
      /**
       * What the database's owner (or superuser) can do: change row `seq` and recompute every
       * hash after it and the head, so the chain alone verifies again.
       */
      rewrite(seq: number): Promise<void>;
    } & AsyncDisposable
  >;
}

const sqlite: Adapter = {
  name: "sqlite",
  async open(redactor) {
    const dir = await Deno.makeTempDir({ prefix: "omotai-audit-contract-" });
    const db = openDatabase(`${dir}/omotai.db`);
    return {
      store: sqliteAuditStore(db, new SqliteAuditLog(db, { redactor })),
      genesis: GENESIS_HASH,
      tamper: (seq) => {
        db.exec("DROP TRIGGER audit_no_update");
        db.prepare("UPDATE audit SET decision = 'allow' WHERE seq = ?").run(seq);
        return Promise.resolve();
      },
      rewrite: (seq) => {
        db.exec("DROP TRIGGER IF EXISTS audit_no_update");
        const rows = db.prepare("SELECT * FROM audit ORDER BY seq").all()
          .map((r) => ({ ...r })) as unknown as AuditRow[];
        const rewritten = forgeFrom(rows, seq);
        const update = db.prepare(
          "UPDATE audit SET decision = ?, prev_hash = ?, hash = ? WHERE seq = ?",
        );
        for (const r of rewritten) update.run(r.decision, r.prev_hash, r.hash, r.seq);
        const last = rewritten.at(-1)!;
        db.prepare("UPDATE audit_state SET head_hash = ? WHERE id = 1").run(last.hash);
        return Promise.resolve();
      },
      async [Symbol.asyncDispose]() {
        db.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  },
};

let tenants = 0;
const pg = await startPostgres();
{
  await using owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
  await owner.migrate();
}

const postgresAdapter: Adapter = {
  name: "postgres",
  async open(redactor) {
    const tenant = `contract-${++tenants}`;
    const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
    await addTenant(owner, tenant);
    const app = await PgDatabase.open({ url: pg.appUrl });
    return {
      store: new PgAuditLog(app, tenant, { redactor }),
      genesis: tenantGenesis(tenant),
      tamper: async (seq) => {
        // The owner lifts its own trigger: what a database owner could do.
        await owner.transaction(async (tx) => {
          await tx`ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only`;
          await tx`UPDATE audit_events SET decision = 'allow'
            WHERE tenant_id = ${tenant} AND seq = ${seq}`;
          await tx`ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only`;
        });
      },
      rewrite: async (seq) => {
        // The superuser turns every trigger off for its session and rewrites the history.
        await using root = await PgDatabase.open({ url: pg.superUrl }, "owner");
        await root.transaction(async (tx) => {
          await tx`SET LOCAL session_replication_role = replica`;
          const rows = (await tx<Record<string, unknown>[]>`
            SELECT seq, ts, session, agent, kind, source, origin, method, decision, reason,
              module, rule, prev_hash, hash
            FROM audit_events WHERE tenant_id = ${tenant} ORDER BY seq`)
            .map((r) => ({ ...r, seq: Number(r.seq) })) as unknown as AuditRow[];
          for (const r of forgeFrom(rows, seq)) {
            await tx`UPDATE audit_events SET decision = ${r.decision}, prev_hash = ${r.prev_hash},
              hash = ${r.hash} WHERE tenant_id = ${tenant} AND seq = ${r.seq}`;
          }
          const [last] = await tx`SELECT hash FROM audit_events WHERE tenant_id = ${tenant}
            ORDER BY seq DESC LIMIT 1`;
          await tx`UPDATE audit_heads SET head_hash = ${last.hash} WHERE tenant_id = ${tenant}`;
        });
      },
      async [Symbol.asyncDispose]() {
        await app[Symbol.asyncDispose]();
        await owner[Symbol.asyncDispose]();
      },
    };
  },
};

const ADAPTERS = [sqlite, postgresAdapter];

function events(n: number, from = 0): AuditEvent[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      kind: "request",
      source: "request",
      session: "s1",
      origin: `http://127.0.0.${i % 3 + 1}:8000/secret/path?token=abc${i}`,
      method: "GET",
      decision: i % 2 ? "deny" : "allow",
      reason: i % 2 ? "ORIGIN_NOT_ALLOWED" : "OK",
      module: "baseline",
    } as const;
  });
}

for (const adapter of ADAPTERS) {
  Deno.test(`AuditStore (${adapter.name}): append chains rows from the genesis in order, origins only, and verifies`, async () => {
    await using s = await adapter.open(new Redactor());
    assert.deepEqual(await s.store.append([]), []);
    const first = await s.store.append(events(3));
    const second = await s.store.append(events(4, 3));
    assert.deepEqual([...first, ...second].map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7]);
    const rows = await s.store.rows();
    assert.deepEqual(rows, [...first, ...second]);
    assert.equal(rows[0].prev_hash, s.genesis);
    assert.equal(rows[1].prev_hash, rows[0].hash);
    assert.equal(rows[0].origin, "http://127.0.0.1:8000");
    assert.ok(!JSON.stringify(rows).includes("token"));
    assert.deepEqual((await s.store.rows(5, 1)).map((r) => r.seq), [6]);
    const v = await s.store.verify();
    assert.deepEqual(v.problems, []);
    assert.equal(v.rows, 7);
    assert.equal(v.lastSeq, 7);
  });

  Deno.test(`AuditStore (${adapter.name}): a secret in any free-text field is redacted before it is hashed and stored`, async () => {
    const redactor = new Redactor();
    redactor.add([SECRET]);
    await using s = await adapter.open(redactor);
    await s.store.append([{
      kind: "click",
      source: "action",
      agent: `agent ${SECRET}`,
      session: SECRET.toUpperCase(),
      decision: "deny",
      reason: `FOO ${SECRET}`,
      rule: encodeURIComponent(SECRET),
    }]);
    const rows = await s.store.rows();
    const text = JSON.stringify(rows);
    assert.ok(!text.toLowerCase().includes(SECRET.toLowerCase()), text);
    assert.ok(text.includes(REDACTED));
    assert.equal((await s.store.verify()).ok, true);
  });

  Deno.test(`AuditStore (${adapter.name}): a row changed behind the store's back fails verify`, async () => {
    await using s = await adapter.open(new Redactor());
    await s.store.append(events(4));
    await s.tamper(2);
    const v = await s.store.verify();
    assert.equal(v.ok, false);
    assert.match(v.problems[0], /row 2: contents do not match its hash/);
  });

  Deno.test(`AuditStore (${adapter.name}): prune of nothing old removes nothing and the chain still verifies`, async () => {
    await using s = await adapter.open(new Redactor());
    await s.store.append(events(5));
    const r = await s.store.prune(new Date(Date.now() - 100 * 86_400_000));
    assert.equal(r.removed, 0);
    assert.equal(r.anchorSeq, 1);
    assert.equal((await s.store.verify()).ok, true);
    await s.store.append(events(1, 5));
    assert.equal((await s.store.verify()).rows, 6);
  });

  Deno.test(`AuditStore (${adapter.name}): recent() pages newest first, before a seq, by session and decision`, async () => {
    await using s = await adapter.open(new Redactor());
    assert.deepEqual(await s.store.recent({ limit: 5 }), [], "an empty chain");
    // Rows 1-10: sessions a, b, a, b, ...; decisions allow, deny, confirm, allow, deny, ...
    const decisions = ["allow", "deny", "confirm"] as const;
    await s.store.append(Array.from({ length: 10 }, (_, i) => ({
      kind: "request",
      source: "request",
      session: i % 2 ? "b" : "a",
      decision: decisions[i % 3],
      reason: `r${i + 1}`,
    })));
    const all = await s.store.rows();
    const seqs = (rows: AuditRow[]) => rows.map((r) => r.seq);
    // Whole rows, as rows() gives them, newest first.
    assert.deepEqual(await s.store.recent({ limit: 3 }), all.slice(-3).reverse());
    assert.deepEqual(await s.store.recent({ limit: 100 }), [...all].reverse());
    assert.deepEqual(seqs(await s.store.recent({ limit: 3, before: 8 })), [7, 6, 5]);
    assert.deepEqual(seqs(await s.store.recent({ limit: 3, before: 2 })), [1]);
    assert.deepEqual(await s.store.recent({ limit: 3, before: 1 }), []);
    assert.deepEqual(await s.store.recent({ limit: 0 }), []);
    assert.deepEqual(seqs(await s.store.recent({ limit: 10, session: "b" })), [10, 8, 6, 4, 2]);
    assert.deepEqual(seqs(await s.store.recent({ limit: 10, decision: "deny" })), [8, 5, 2]);
    assert.deepEqual(
      seqs(await s.store.recent({ limit: 10, session: "a", decision: "allow" })),
      [7, 1],
    );
    assert.deepEqual(
      seqs(await s.store.recent({ limit: 1, before: 7, session: "a", decision: "allow" })),
      [1],
    );
    assert.deepEqual(await s.store.recent({ limit: 10, session: "nobody" }), []);
    // Paging with the last seq of each page walks every row once.
    const paged: number[] = [];
    let page = await s.store.recent({ limit: 4 });
    while (page.length > 0) {
      paged.push(...seqs(page));
      page = await s.store.recent({ limit: 4, before: page.at(-1)!.seq });
    }
    assert.deepEqual(paged, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  Deno.test(`AuditStore (${adapter.name}): concurrent appends are serialized into one gapless chain`, async () => {
    await using s = await adapter.open(new Redactor());
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.store.append(events(3, i * 3))));
    const v = await s.store.verify();
    assert.deepEqual(v.problems, []);
    assert.equal(v.rows, 60);
  });
}

for (const adapter of ADAPTERS) {
  Deno.test(`AuditStore (${adapter.name}): signed checkpoints catch a history the database's owner rewrote and re-hashed`, async () => {
    await using s = await adapter.open(new Redactor());
    const dir = await Deno.makeTempDir({ prefix: "omotai-checkpoints-" });
    const file = `${dir}/audit-checkpoints.jsonl`;
    const key = generateCheckpointKey();
    const lines: string[] = [];
    try {
      await s.store.append(events(5));
      {
        await using signer = new Checkpointer({
          store: s.store,
          key,
          runtime: "rt-a",
          file,
          log: (l) => lines.push(l),
        });
        const first = await signer.checkpoint();
        assert.equal(first?.seq, 5);
        assert.equal(await signer.checkpoint(), undefined, "an unmoved head is not signed again");
        await s.store.append(events(3, 5));
      } // disposed: the final head (row 8) is signed
      const { checkpoints, problems } = await readCheckpoints(file);
      assert.deepEqual(problems, []);
      assert.deepEqual(checkpoints.map((c) => c.seq), [5, 8]);
      assert.deepEqual(await s.store.checkpoints(), checkpoints);
      const check = checkpointCheck({ checkpoints, publicKey: key.public });
      assert.deepEqual((await s.store.verify(check)).problems, []);
      // The forgery verifies as a chain: only the checkpoints tell.
      await s.rewrite(3);
      assert.deepEqual((await s.store.verify()).problems, []);
      const v = await s.store.verify(check);
      assert.equal(v.ok, false);
      assert.match(v.problems.join("\n"), /row 5 is not the row that was signed/);
      assert.deepEqual(lines, []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test(clusterTeardown("AuditStore contract", pg));
