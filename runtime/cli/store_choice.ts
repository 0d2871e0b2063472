/**
 * Which store a command works on: a tenant's in the shared PostgreSQL store when a database
 * is named (`--database`, `OMOTAI_DATABASE_URL`), else the data dir's embedded SQLite file
 * (its one tenant). The commands that open a store (`agent`, `audit`, `domain`, `grant`,
 * `secret`) choose through here.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { OmotaiError } from "../mod.ts";
import { databaseUrl, dataDirFrom } from "../launcher/mod.ts";
import { databasePath, DEFAULT_TENANT, openDatabase, PgDatabase } from "../store/mod.ts";

/** The options that choose a store. */
export interface StoreOptions {
  "data-dir"?: string;
  database?: string;
  tenant?: string;
}

/** How a command's port is made over either database. */
export interface StoreAdapters<S> {
  pg(db: PgDatabase, tenant: string): S;
  sqlite(db: DatabaseSync): S;
}

/**
 * Runs `fn` on the store `options` choose, closed after; `dataDir` is given for the embedded
 * store. `--tenant` other than `default` without a database is `BAD_TENANT`.
 */
export async function withStore<S, T>(
  options: StoreOptions,
  adapters: StoreAdapters<S>,
  fn: (store: S, dataDir?: string) => Promise<T>,
): Promise<T> {
  const url = databaseUrl(options.database);
  if (url) {
    // The operator's commands run as whoever the URL names (the owner, typically), and may
    // walk a whole tenant's chain: statements get minutes, not the runtime's seconds.
    await using db = await PgDatabase.open({ url, statementTimeoutMs: 600_000 }, "owner");
    return await fn(adapters.pg(db, options.tenant ?? DEFAULT_TENANT));
  }
  if (options.tenant !== undefined && options.tenant !== DEFAULT_TENANT) {
    throw new OmotaiError("BAD_TENANT", "the embedded database has one tenant: default");
  }
  return await withEmbeddedStore(
    options["data-dir"],
    (db, dataDir) => fn(adapters.sqlite(db), dataDir),
  );
}

/**
 * Runs `fn` on the embedded SQLite store of the data dir `--data-dir` names (else the
 * default), created when missing and closed after, whatever database the environment names.
 */
export async function withEmbeddedStore<T>(
  dataDirFlag: string | undefined,
  fn: (db: DatabaseSync, dataDir: string) => Promise<T>,
): Promise<T> {
  const dataDir = dataDirFrom(dataDirFlag);
  Deno.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(databasePath(dataDir));
  try {
    return await fn(db, dataDir);
  } finally {
    db.close();
  }
}
