/**
 * `omotai tenant add|token|bind|list`: the tenants of a shared PostgreSQL store, made by the
 * tables' owner (`--database` with the owner's URL, or `OMOTAI_DATABASE_URL`). A tenant's
 * admin token (the console's and the API's credential on every runtime of the tenant) is made
 * by `add` and replaced by `token`, printed once: only its hash is kept. The embedded SQLite
 * store has exactly one tenant, `default`, and nothing to add.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { OmotaiError } from "../mod.ts";
import { databaseUrl, TENANT_OPTIONS } from "../launcher/mod.ts";
import {
  addTenant,
  bindTenantLogin,
  listTenants,
  PgDatabase,
  rotateAdminToken,
  tenantLogins,
} from "../store/mod.ts";

/** Usage of `omotai tenant`. */
export const TENANT_USAGE =
  `omotai tenant add ID | token ID | bind ID ROLE | list   --database URL (the owner's)`;

/** Runs a tenant subcommand; returns the exit code. */
export async function tenantCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: TENANT_OPTIONS,
    allowPositionals: true,
  });
  if (sub !== "add" && sub !== "token" && sub !== "bind" && sub !== "list") {
    console.error(TENANT_USAGE);
    return 2;
  }
  const url = databaseUrl(values.database);
  if (!url) {
    throw new OmotaiError(
      "BAD_OPTION",
      "tenants live in a shared PostgreSQL store: give --database or OMOTAI_DATABASE_URL (the embedded store has one tenant, default)",
    );
  }
  await using db = await PgDatabase.open({ url }, "owner");
  await db.migrate();
  if (sub === "bind") {
    // A runtime's login, bound: it acts for this tenant only (against a compromised runtime).
    const [id, role] = positionals;
    if (!id || !role || positionals.length !== 2) {
      console.error(TENANT_USAGE);
      return 2;
    }
    await bindTenantLogin(db, id, role);
    console.log(`login ${role} now acts for tenant ${id} only`);
    return 0;
  }
  if (sub === "add" || sub === "token") {
    const [id] = positionals;
    if (!id || positionals.length !== 1) {
      console.error(TENANT_USAGE);
      return 2;
    }
    if (sub === "add") await addTenant(db, id);
    const token = await rotateAdminToken(db, id);
    console.log(sub === "add" ? `added tenant ${id}` : `replaced the admin token of ${id}`);
    // Last line, alone: scripts take it with `tail -1`. Shown once; only its hash is kept.
    console.log(`admin token (shown only now; runtimes of ${id} accept it within 5 s):`);
    console.log(token);
    return 0;
  }
  const tenants = await listTenants(db);
  if (tenants.length === 0) console.log("no tenants");
  const logins = await tenantLogins(db);
  for (const t of tenants) {
    const bound = logins.filter((l) => l.tenant === t.id).map((l) => l.role);
    console.log(
      `${t.id}  created ${t.created}${bound.length ? `  logins: ${bound.join(", ")}` : ""}`,
    );
  }
  return 0;
}
