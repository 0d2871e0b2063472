import assert from "node:assert/strict";
import postgres from "postgres";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
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

Deno.test(clusterTeardown("PgDatabase tests", pg));
