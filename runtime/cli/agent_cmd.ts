/**
 * `omotai agent add|list|rm`: the agents that may use the MCP door, each with its own key.
 * `add` prints the key once, alone on the last line of stdout, so a script can take it with
 * `tail -n 1`; it is never stored or shown again. A running runtime refuses a removed agent's
 * key at its next request.
 *
 * @module
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { AgentKeys } from "../agents/agent_keys.ts";
import { OmotaiError } from "../errors.ts";
import { databasePath, openDatabase } from "../store/database.ts";
import { dataDirFrom } from "../launcher/data_dir.ts";
import { AGENT_OPTIONS } from "../launcher/options.ts";

/** Usage of `omotai agent`. */
export const AGENT_USAGE = `omotai agent add NAME [--policy FILE] [--data-dir DIR]
omotai agent list [--data-dir DIR]
omotai agent rm NAME [--data-dir DIR]`;

/** Runs an agent subcommand; returns the exit code. */
export function agentCommand(args: string[]): number {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: AGENT_OPTIONS,
  });
  const dataDir = dataDirFrom(values["data-dir"]);
  const withKeys = <T>(fn: (keys: AgentKeys) => T): T => {
    Deno.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const db = openDatabase(databasePath(dataDir));
    try {
      return fn(new AgentKeys(db));
    } finally {
      db.close();
    }
  };
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
      const { name, key } = withKeys((keys) => keys.add(positionals[0], policy));
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
      const agents = withKeys((keys) => keys.list());
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
      const removed = withKeys((keys) => keys.remove(positionals[0]));
      console.log(removed ? `removed agent ${positionals[0]}` : `no agent ${positionals[0]}`);
      return removed ? 0 : 1;
    }
    default:
      console.error(AGENT_USAGE);
      return 2;
  }
}
