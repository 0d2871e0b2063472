/**
 * `omotai agent add|list|rm`: the agents that may use the MCP door, each with its own key.
 * `add` prints the key once, alone on the last line of stdout, so a script can take it with
 * `tail -n 1`; it is never stored or shown again. A running runtime refuses a removed agent's
 * key at its next request. `--database URL` (or `OMOTAI_DATABASE_URL`) with `--tenant ID` works
 * on that tenant's agents in a shared PostgreSQL store.
 *
 * @module
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { type AgentStore, PgAgentStore, SqliteAgentStore } from "../store/mod.ts";
import { OmotaiError } from "../mod.ts";
import { AGENT_OPTIONS } from "../launcher/mod.ts";
import { withStore } from "./store_choice.ts";

/** Usage of `omotai agent`. */
export const AGENT_USAGE =
  `omotai agent add NAME [--policy FILE] [--data-dir DIR | --database URL --tenant ID]
omotai agent list [--data-dir DIR | --database URL --tenant ID]
omotai agent rm NAME [--data-dir DIR | --database URL --tenant ID]`;

/** Runs an agent subcommand; returns the exit code. */
export async function agentCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: AGENT_OPTIONS,
  });
  const withKeys = <T>(fn: (keys: AgentStore) => Promise<T>): Promise<T> =>
    withStore(values, {
      pg: (db, tenant) => new PgAgentStore(db, tenant),
      sqlite: (db) => new SqliteAgentStore(db),
    }, fn);
  if (sub !== "add" && values.policy !== undefined) {
    throw new OmotaiError("BAD_OPTION", `--policy belongs to agent add\n${AGENT_USAGE}`);
  }
  switch (sub) {
    case "add": {
      if (positionals.length !== 1) {
        throw new OmotaiError("BAD_OPTION", `agent add takes one name\n${AGENT_USAGE}`);
      }
      // Relative to where the operator typed it, not to wherever the runtime later runs.
      const policy = values.policy !== undefined ? resolve(Deno.cwd(), values.policy) : undefined;
      const { name, key } = await withKeys((keys) => keys.add(positionals[0], policy));
      console.error(
        `added agent ${name}${policy ? ` (policy ${policy})` : ""}. Its key follows, shown ` +
          "this once: give it to the agent's MCP client as Authorization: Bearer <key>.",
      );
      console.log(key);
      return 0;
    }
    case "list": {
      if (positionals.length !== 0) {
        throw new OmotaiError("BAD_OPTION", `agent list takes no name\n${AGENT_USAGE}`);
      }
      const agents = await withKeys((keys) => keys.list());
      if (agents.length === 0) console.log("no agents");
      for (const a of agents) {
        console.log(
          `${a.name}  policy ${a.policy ?? "(runtime --policy)"}  (since ${a.createdAt})`,
        );
      }
      return 0;
    }
    case "rm": {
      if (positionals.length !== 1) {
        throw new OmotaiError("BAD_OPTION", `agent rm takes one name\n${AGENT_USAGE}`);
      }
      const removed = await withKeys((keys) => keys.remove(positionals[0]));
      console.log(removed ? `removed agent ${positionals[0]}` : `no agent ${positionals[0]}`);
      return removed ? 0 : 1;
    }
    default:
      console.error(AGENT_USAGE);
      return 2;
  }
}
