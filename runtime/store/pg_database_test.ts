import assert from "node:assert/strict";
import postgres from "postgres";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { OmotaiError } from "../errors.ts";
import { PgDatabase } from "./pg_database.ts";
import { PG_MIGRATIONS } from "./pg_migrations.ts";

const pg = await startPostgres();

Deno.test("PgDatabase.migrate() on a fresh database: two migrators at once both end at the latest version, and no lock the runtime's role holds stalls them", async () => {
  // The runtime's role holding every advisory lock it likes changes nothing.
  const app = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  await app`SELECT pg_advisory_lock(7213404551)`;
  const a = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
  const b = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
  try {
    assert.deepEqual(
      await Promise.all([a.migrate(), b.migrate()]),
      [PG_MIGRATIONS.length, PG_MIGRATIONS.length],
    );
    const rows = await a.transaction((tx) =>
      tx<{ version: number }[]>`SELECT version FROM schema_migrations ORDER BY version`
    );
    assert.deepEqual(rows.map((r) => r.version), PG_MIGRATIONS.map((_, i) => i + 1));
  } finally {
    await app.end();
    await a[Symbol.asyncDispose]();
    await b[Symbol.asyncDispose]();
  }
});

Deno.test("PgDatabase.migrate() refuses a schema newer than this build (DB_TOO_NEW)", async () => {
  await using owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
  await owner.migrate();
  await owner.transaction((tx) => tx`INSERT INTO schema_migrations (version) VALUES (999)`);
  try {
    await assert.rejects(
      owner.migrate(),
      (err: unknown) => err instanceof OmotaiError && err.code === "DB_TOO_NEW",
    );
  } finally {
    await owner.transaction((tx) => tx`DELETE FROM schema_migrations WHERE version = 999`);
  }
});

Deno.test("PgDatabase.open() refuses a runtime login that could SET ROLE past row-level security (a NOINHERIT member of the owner or of a BYPASSRLS role)", async () => {
  await using owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
  await owner.migrate();
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  try {
    await su.unsafe(
      `CREATE ROLE sneaky_owner LOGIN NOINHERIT PASSWORD 'x1' IN ROLE omotai_owner, omotai_runtime`,
    );
    await su.unsafe(`CREATE ROLE bypasser NOLOGIN BYPASSRLS`);
    await su.unsafe(
      `CREATE ROLE sneaky_bypass LOGIN NOINHERIT PASSWORD 'x2' IN ROLE bypasser, omotai_runtime`,
    );
    // NOINHERIT inherits nothing, CONNECT included: granted to them directly.
    await su.unsafe(`GRANT CONNECT ON DATABASE omotai TO sneaky_owner, sneaky_bypass`);
    for (const [user, pass] of [["sneaky_owner", "x1"], ["sneaky_bypass", "x2"]]) {
      const url = new URL(pg.appUrl);
      url.username = user;
      url.password = pass;
      await assert.rejects(
        PgDatabase.open({ url: url.href }),
        (err: unknown) => err instanceof OmotaiError && err.code === "DB_ROLE_UNSAFE",
        user,
      );
    }
    // The app login passes.
    await (await PgDatabase.open({ url: pg.appUrl }))[Symbol.asyncDispose]();
  } finally {
    await su.end();
  }
});

Deno.test(clusterTeardown("PgDatabase tests", pg));
