/**
 * Which shared database a command uses: `--database URL`, else `OMOTAI_DATABASE_URL`, else
 * none (the data dir's embedded SQLite). The URL carries a password: it is never printed.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/** The environment variable that names the shared database. */
export const DATABASE_URL_ENV = "OMOTAI_DATABASE_URL";

/**
 * The variables the PostgreSQL client (`npm:postgres`) reads as it opens a pool: its `PG*`
 * defaults, and the login name it falls back to. A command that opens the shared store is
 * granted these to read (the network stays the URL's host and port only).
 */
export const PG_CLIENT_ENV: readonly string[] = [
  "PGUSERNAME",
  "PGUSER",
  "PGPASSWORD",
  "PGDATABASE",
  "PGAPPNAME",
  "PGTARGETSESSIONATTRS",
  "PGTARGET_SESSION_ATTRS",
  "PGMAX",
  "PGSSL",
  "PGSSLNEGOTIATION",
  "PGIDLE_TIMEOUT",
  "PGCONNECT_TIMEOUT",
  "PGMAX_LIFETIME",
  "PGMAX_PIPELINE",
  "PGBACKOFF",
  "PGKEEP_ALIVE",
  "PGPREPARE",
  "PGDEBUG",
  "PGFETCH_TYPES",
  "PGPUBLICATIONS",
  "USERNAME",
  "USER",
  "LOGNAME",
];

/** The PostgreSQL URL to use, or undefined for the embedded default. */
export function databaseUrl(flag: string | undefined): string | undefined {
  const url = flag ?? Deno.env.get(DATABASE_URL_ENV);
  if (url === undefined || url === "") return undefined;
  const parsed = databaseAddress(url);
  if (!parsed) {
    throw new OmotaiError(
      "BAD_OPTION",
      "--database takes postgres://USER:PASSWORD@HOST:PORT/DATABASE (or postgresql://)",
    );
  }
  return url;
}

/** `host:port` of a PostgreSQL URL (what the launcher grants), or undefined if it is not one. */
export function databaseAddress(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") return undefined;
  if (!u.hostname) return undefined;
  return `${u.hostname}:${u.port || "5432"}`;
}
