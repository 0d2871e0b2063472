/**
 * `omotai grant add|approve|rm|list`: the operator's grants of vault secrets to agents
 * (docs/grants.md), in the data dir's embedded store or a tenant's in the shared PostgreSQL
 * store (`--database URL` or `OMOTAI_DATABASE_URL`, with `--tenant ID`). `add` needs no vault
 * key: it checks only that the secret's id is in the vault's table, and a grant never holds a
 * value. A grant starts pending unless `--approve` is given; every change is an audit row
 * (`module: cli`) in the same database, kept before the command reports it, and a running
 * runtime sees it at its next redemption.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import {
  PgAuditLog,
  PgAuditSink,
  type PgDatabase,
  PgGrantStore,
  PgVaultRecords,
  SqliteAuditLog,
  SqliteGrantStore,
} from "../store/mod.ts";
import { OmotaiError } from "../mod.ts";
import { type AsyncSecretIndex, type Grant, Grants } from "../grants/mod.ts";
import { Vault } from "../../vault/mod.ts";
import { GRANT_OPTIONS } from "../launcher/mod.ts";
import { withStore } from "./store_choice.ts";
import { processRedactor } from "../redact/mod.ts";

/** Usage of `omotai grant`. */
export const GRANT_USAGE =
  `omotai grant add SECRET_ID --agent NAME --purpose TEXT --mode once|session|standing
                 [--expires 24h|7d|ISO] [--fill ORIGIN[,ORIGIN]]
                 [--capture ORIGIN[,ORIGIN] --workflow NAME --output NAME]
                 [--approve] [--data-dir DIR | --database URL --tenant ID]
omotai grant approve ID [--data-dir DIR | --database URL --tenant ID]
omotai grant rm ID [--data-dir DIR | --database URL --tenant ID]
omotai grant list [--data-dir DIR | --database URL --tenant ID]
One of --fill and --capture; --expires defaults to 24h; without --approve the grant waits
pending until an operator approves it. A capture grant (mode once) names the workflow and the
output it may store into SECRET_ID, which must still be empty. rm revokes (the grant stays
listed).`;

const ADD_ONLY = [
  "agent",
  "purpose",
  "mode",
  "expires",
  "fill",
  "capture",
  "workflow",
  "output",
  "approve",
] as const;

/**
 * One command's grants, over either store. Disposing it waits for the audit rows still
 * queued (the shared store's), so it is disposed before the database closes.
 */
export interface CommandGrants extends AsyncDisposable {
  grants: Grants;
}

/** The embedded store's grants (its audit log writes each row at once). */
export function sqliteCommandGrants(
  db: DatabaseSync,
  secrets: { has(secretId: string): boolean },
): CommandGrants {
  return {
    grants: new Grants(new SqliteGrantStore(db), {
      audit: new SqliteAuditLog(db, { redactor: processRedactor() }),
      secrets,
    }),
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}

/**
 * Tenant `tenant`'s grants in the shared store: every change waits until its audit row is
 * committed (or fails as `AUDIT_UNAVAILABLE`, the change undone or revoked as the store
 * does), so a command reports only what the audit holds.
 */
export function pgCommandGrants(
  db: PgDatabase,
  tenant: string,
  secrets: AsyncSecretIndex,
): CommandGrants {
  const sink = new PgAuditSink(new PgAuditLog(db, tenant, { redactor: processRedactor() }));
  return {
    grants: new Grants(new PgGrantStore(db, tenant), {
      audit: { append: (event) => sink.appendSoon(event) },
      secrets,
    }),
    [Symbol.asyncDispose]: () => sink.flush(),
  };
}

/** Runs a grant subcommand; returns the exit code. */
export async function grantCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: GRANT_OPTIONS,
  });
  if (sub !== "add") {
    const stray = ADD_ONLY.find((k) => values[k] !== undefined);
    if (stray) {
      throw new OmotaiError("BAD_OPTION", `--${stray} belongs to grant add\n${GRANT_USAGE}`);
    }
  }
  const run = <T>(fn: (grants: Grants) => Promise<T>): Promise<T> =>
    withStore(values, {
      // The tenant's vault is asked for the secret's id only: no key is needed.
      pg: (db, tenant) =>
        pgCommandGrants(db, tenant, {
          has: (id) => Vault.has(new PgVaultRecords(db, tenant), id),
        }),
      sqlite: (db) => sqliteCommandGrants(db, { has: (id) => Vault.has(db, id) }),
    }, async (store) => {
      await using open = store;
      return await fn(open.grants);
    });
  const oneId = (what: string) => {
    if (positionals.length !== 1) {
      throw new OmotaiError("BAD_OPTION", `grant ${what} takes one grant id\n${GRANT_USAGE}`);
    }
    return positionals[0];
  };
  switch (sub) {
    case "add": {
      if (positionals.length !== 1) {
        throw new OmotaiError("BAD_OPTION", `grant add takes one secret id\n${GRANT_USAGE}`);
      }
      for (const k of ["agent", "purpose", "mode"] as const) {
        if (values[k] === undefined) {
          throw new OmotaiError("BAD_OPTION", `grant add needs --${k}\n${GRANT_USAGE}`);
        }
      }
      const uses = [
        ...(values.fill ? [{ kind: "fill", allowed_origins: origins(values.fill) }] : []),
        ...(values.capture
          ? [{
            kind: "capture",
            allowed_origins: origins(values.capture),
            workflow: values.workflow,
            output: values.output,
          }]
          : []),
      ];
      if (uses.length === 0) {
        throw new OmotaiError(
          "BAD_OPTION",
          `grant add needs --fill or --capture (or both)\n${GRANT_USAGE}`,
        );
      }
      const grant = await run((store) =>
        store.add({
          secret_id: positionals[0],
          agent: values.agent,
          purpose: values.purpose,
          mode: values.mode,
          ...(values.expires !== undefined ? { expires: values.expires } : {}),
          uses,
        }, { approve: values.approve === true, by: "cli" })
      );
      console.log(
        `added grant ${grant.id} (${grant.state}): ${grant.secret_id} for ${grant.agent}, ` +
          `${grant.mode}, until ${grant.expires_at}`,
      );
      if (grant.state === "pending") {
        console.log(`approve it with: omotai grant approve ${grant.id}`);
      }
      return 0;
    }
    case "approve": {
      const id = oneId("approve");
      const grant = await run((store) => store.approve(id, { by: "cli" }));
      console.log(`approved grant ${grant.id} (until ${grant.expires_at})`);
      return 0;
    }
    case "rm": {
      const id = oneId("rm");
      await run((store) => store.revoke(id, { by: "cli" }));
      console.log(`revoked grant ${id}`);
      return 0;
    }
    case "list": {
      if (positionals.length !== 0) {
        throw new OmotaiError("BAD_OPTION", `grant list takes no argument\n${GRANT_USAGE}`);
      }
      const grants = await run((store) => store.list());
      if (grants.length === 0) console.log("no grants");
      for (const g of grants) console.log(grantLine(g));
      return 0;
    }
    default:
      console.error(GRANT_USAGE);
      return 2;
  }
}

/** `--fill a,b --fill c` as one list (the store checks each origin). */
function origins(flags: string[]): string[] {
  return flags.flatMap((f) => f.split(",")).map((o) => o.trim()).filter((o) => o !== "");
}

/** One grant, one line (the purpose is plain text: control characters never got in). */
function grantLine(g: Grant): string {
  const uses = g.uses.map((u) => `${u.kind} ${u.allowed_origins.join(",")}`).join("  ");
  return `${g.id}  ${g.state}  ${g.secret_id}  agent ${g.agent}  ${g.mode}  ` +
    `until ${g.expires_at}  ${uses}  redeemed ${g.redemptions}x  "${g.purpose}"`;
}
