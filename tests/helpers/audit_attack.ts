/**
 * What the attacker's passes over the PostgreSQL audit (`runtime/store/pg_append_attack_test.ts`,
 * `runtime/store/pg_chain_attack_test.ts`) share: runtime logins of their own, raw connections
 * (what a compromised runtime has), rows as `audit_append` takes them, and its answers as
 * "appended" or the refusal's SQLSTATE and name.
 *
 * @module
 */
import postgres from "postgres";
import { auditFields, rowTail } from "../../runtime/store/audit_row.ts";
import { PgAuditLog } from "../../runtime/store/pg_audit_log.ts";
import { Redactor } from "../../runtime/redact/mod.ts";
import type { PgDatabase } from "../../runtime/store/pg_database.ts";
import { bindTenantLogin } from "../../runtime/store/pg_tenants.ts";
import type { TestPostgres } from "./postgres.ts";

/** A row as JSON takes it. */
export type Rec = Record<string, unknown>;

/** JSON text of `v` (rows are sent as text and cast: a bound string would be re-encoded). */
export const json = (v: unknown): string => JSON.stringify(v);

/** A raw connection with `url`'s login. */
export function raw(url: string): postgres.Sql {
  return postgres(url, { max: 1, onnotice: () => {} });
}

/**
 * A runtime login of its own named `name` (docs/deploy.md), bound to `tenant` when one is
 * given; its URL.
 */
export async function login(
  pg: TestPostgres,
  owner: PgDatabase,
  name: string,
  tenant?: string,
): Promise<string> {
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  try {
    await su.unsafe(`CREATE ROLE ${name} LOGIN PASSWORD 'pw-${name}' IN ROLE omotai_runtime`);
  } finally {
    await su.end();
  }
  if (tenant) await bindTenantLogin(owner, tenant, name);
  const url = new URL(pg.appUrl);
  url.username = name;
  url.password = `pw-${name}`;
  return url.href;
}

/** `n` rows of `kind` at `ts` as `audit_append` takes them: fields and their hash's tail. */
export function batch(n: number, kind: string, ts: string): Rec[] {
  return Array.from({ length: n }, () => {
    const fields = auditFields({ kind, source: "action", decision: "allow" }, ts, (s) => s);
    return { ...fields, tail: rowTail(fields) };
  });
}

/** The problems `verify()` finds in `tenant`'s chain, read as the owner (none: it verifies). */
export async function problems(owner: PgDatabase, tenant: string): Promise<string[]> {
  return (await new PgAuditLog(owner, tenant, { redactor: new Redactor() }).verify()).problems;
}

/** A database error as its SQLSTATE and the function's own refusal name, if any. */
export function refusal(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const own = /^([A-Z]+_[A-Z_]+):/.exec(e.message ?? "")?.[1];
  return `${e.code ?? "?"}${own ? ` ${own}` : ""}`;
}

/**
 * `audit_append(tenant, rows::jsonb)` on `sql`: "appended" (as many places as rows), the
 * number placed otherwise, or the refusal.
 */
export async function append(
  sql: postgres.Sql | postgres.TransactionSql,
  tenant: string | null,
  rows: string | null,
): Promise<string> {
  try {
    const placed = await sql<{ seq: string }[]>`
      SELECT seq FROM audit_append(${tenant}, ${rows}::text::jsonb)`;
    const given = rows ? JSON.parse(rows) : null;
    return Array.isArray(given) && placed.length === given.length
      ? "appended"
      : `${placed.length} placed`;
  } catch (err) {
    return refusal(err);
  }
}

/** The same, inside a savepoint of `tx` (a refusal does not end the transaction). */
export function appendIn(
  tx: postgres.TransactionSql,
  tenant: string | null,
  rows: string | null,
): Promise<string> {
  return tx.savepoint((sp) => append(sp, tenant, rows)).then((r) => r, refusal);
}

/** Milliseconds `work` takes, with what it answered. */
export async function timed<T>(work: Promise<T>): Promise<{ ms: number; result: T }> {
  const t0 = performance.now();
  const result = await work;
  return { ms: performance.now() - t0, result };
}
