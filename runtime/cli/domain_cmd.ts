/**
 * `omotai domain add|rm|list`: the operator's dynamic origin rules, in the data dir's
 * embedded store or a tenant's in the shared PostgreSQL store (`--database`, `--tenant`).
 * Every running runtime of the store applies a change to its next action and request.
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  type DomainStore,
  type PgDatabase,
  PgDomainStore,
  SqliteDomainStore,
} from "../store/mod.ts";
import { OmotaiError } from "../mod.ts";
import { DOMAIN_OPTIONS } from "../launcher/mod.ts";
import { withStore } from "./store_choice.ts";

/** Usage of `omotai domain`. */
export const DOMAIN_USAGE =
  `omotai domain add ORIGIN --allow|--deny [--data-dir DIR | --database URL --tenant ID]
omotai domain rm ORIGIN [--data-dir DIR | --database URL --tenant ID]
omotai domain list [--data-dir DIR | --database URL --tenant ID]`;

/** Runs a domain subcommand; returns the exit code. */
export async function domainCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: DOMAIN_OPTIONS,
  });
  const run = <T>(fn: (rules: DomainStore) => Promise<T>) =>
    withStore(values, {
      pg: (db, tenant) => pgRules(db, tenant),
      sqlite: (db) => new SqliteDomainStore(db),
    }, fn);
  switch (sub) {
    case "add": {
      if (positionals.length !== 1 || values.allow === values.deny) {
        throw new OmotaiError(
          "BAD_OPTION",
          `domain add takes one origin and --allow or --deny\n${DOMAIN_USAGE}`,
        );
      }
      const origin = await run((r) => r.add(positionals[0], values.allow ? "allow" : "deny"));
      console.log(`${values.allow ? "allowed" : "denied"} ${origin}`);
      return 0;
    }
    case "rm": {
      if (positionals.length !== 1) {
        throw new OmotaiError("BAD_OPTION", `domain rm takes one origin\n${DOMAIN_USAGE}`);
      }
      const removed = await run((r) => r.remove(positionals[0]));
      console.log(removed ? `removed ${positionals[0]}` : `no rule for ${positionals[0]}`);
      return removed ? 0 : 1;
    }
    case "list": {
      const rules = await run((r) => r.list());
      if (rules.length === 0) console.log("no domain rules");
      for (const r of rules) {
        console.log(`${r.rule.padEnd(5)} ${r.origin}  (since ${r.added_at})`);
      }
      return 0;
    }
    default:
      console.error(DOMAIN_USAGE);
      return 2;
  }
}

/**
 * A tenant's rules for one command: each call opens the shared rules, does its work and
 * closes them (a command needs no snapshot kept fresh).
 */
function pgRules(db: PgDatabase, tenant: string): DomainStore {
  const once = async <T>(fn: (rules: PgDomainStore) => Promise<T>): Promise<T> => {
    await using rules = await PgDomainStore.open(db, tenant);
    return await fn(rules);
  };
  return {
    add: (origin, rule) => once((r) => r.add(origin, rule)),
    remove: (origin) => once((r) => r.remove(origin)),
    list: () => once((r) => r.list()),
    current: () => {
      throw new OmotaiError("DOMAINS_UNREADABLE", "a command keeps no snapshot");
    },
  };
}
