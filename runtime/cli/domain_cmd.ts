/**
 * `omotai domain add|rm|list`: the operator's dynamic origin rules. A running runtime
 * applies a change to its next action and its next request.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DomainRules } from "../gate/domains.ts";
import { OmotaiError } from "../errors.ts";
import { databasePath, openDatabase } from "../store/database.ts";
import { dataDirFrom } from "../launcher/data_dir.ts";
import { DOMAIN_OPTIONS } from "../launcher/options.ts";

/** Usage of `omotai domain`. */
export const DOMAIN_USAGE = `omotai domain add ORIGIN --allow|--deny [--data-dir DIR]
omotai domain rm ORIGIN [--data-dir DIR]
omotai domain list [--data-dir DIR]`;

/** Runs a domain subcommand; returns the exit code. */
export function domainCommand(args: string[]): number {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: DOMAIN_OPTIONS,
  });
  const open = () => {
    const dataDir = dataDirFrom(values["data-dir"]);
    Deno.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    return openDatabase(databasePath(dataDir));
  };
  switch (sub) {
    case "add": {
      if (positionals.length !== 1 || values.allow === values.deny) {
        throw new OmotaiError(
          "BAD_OPTION",
          `domain add takes one origin and --allow or --deny\n${DOMAIN_USAGE}`,
        );
      }
      const db = open();
      try {
        const origin = new DomainRules(db).add(positionals[0], values.allow ? "allow" : "deny");
        console.log(`${values.allow ? "allowed" : "denied"} ${origin}`);
      } finally {
        db.close();
      }
      return 0;
    }
    case "rm": {
      if (positionals.length !== 1) {
        throw new OmotaiError("BAD_OPTION", `domain rm takes one origin\n${DOMAIN_USAGE}`);
      }
      const db = open();
      try {
        const removed = new DomainRules(db).remove(positionals[0]);
        console.log(removed ? `removed ${positionals[0]}` : `no rule for ${positionals[0]}`);
        return removed ? 0 : 1;
      } finally {
        db.close();
      }
    }
    case "list": {
      const db = open();
      try {
        const rules = new DomainRules(db).list();
        if (rules.length === 0) console.log("no domain rules");
        for (const r of rules) {
          console.log(`${r.rule.padEnd(5)} ${r.origin}  (since ${r.added_at})`);
        }
      } finally {
        db.close();
      }
      return 0;
    }
    default:
      console.error(DOMAIN_USAGE);
      return 2;
  }
}
