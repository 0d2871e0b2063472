/**
 * What `omotai start --mode sse` prints once it listens: the URLs, a generated admin token
 * (once), and a client configuration carrying a fresh key of the quickstart agent.
 *
 * @module
 */
import { describeIsolation } from "../isolation/mod.ts";
import type { Runtime } from "./start.ts";

/** The agent a newcomer's client uses: its key is made anew at every sse start. */
export const QUICKSTART_AGENT = "quickstart";

/**
 * Replaces the quickstart agent's key and returns the new one (printed once, in the banner).
 * On a shared store none is made: the tenant's agents are its operators' (and a quickstart
 * key replaced at every start would end the sessions of the other runtimes' clients).
 */
export async function quickstartKey(
  runtime: Runtime,
  options: { database?: string },
): Promise<string | undefined> {
  if (options.database) return undefined;
  await runtime.agents.remove(QUICKSTART_AGENT);
  return (await runtime.agents.add(QUICKSTART_AGENT)).key;
}

/**
 * The text `omotai start --mode sse` prints once it listens; `key` is an agent's key
 * (none on a shared store: the tenant's agents are added with `omotai agent add`).
 */
export function banner(runtime: Runtime, version: string, key: string | undefined): string {
  const lines = [
    `Omotai ${version} is running.`,
    `  Streamable HTTP: ${runtime.url}/mcp`,
    `  SSE:             ${runtime.url}/sse`,
  ];
  if (runtime.consoleUrl) lines.push(`  Console:         ${runtime.consoleUrl}`);
  if (runtime.demoUrl) lines.push(`  Demo site:       ${runtime.demoUrl}`);
  lines.push(`  Browsers:        ${describeIsolation(runtime.isolation)}`);
  if (runtime.adminTokenGenerated) {
    lines.push(
      "",
      `Admin token (console and /api; shown only now, set OMOTAI_ADMIN_TOKEN to keep one):`,
      `  ${runtime.adminToken}`,
    );
  }
  if (key === undefined) {
    lines.push(
      "",
      `Agents are the tenant's: omotai agent add NAME --tenant ${runtime.tenant} (with the database named).`,
      "Press Ctrl+C to stop.",
    );
    return lines.join("\n");
  }
  lines.push(
    "",
    `Client configuration with a fresh key of agent "${QUICKSTART_AGENT}" (more: omotai agent add NAME):`,
    JSON.stringify(
      {
        mcpServers: {
          omotai: {
            type: "http",
            url: `${runtime.url}/mcp`,
            headers: { Authorization: `Bearer ${key}` },
          },
        },
      },
      null,
      2,
    ),
    "",
    "Or with Claude Code: claude mcp add --transport http omotai " +
      `${runtime.url}/mcp --header "Authorization: Bearer ${key}"`,
  );
  if (runtime.demoUrl) {
    lines.push(`Then ask your agent: "Open ${runtime.demoUrl} and find the cheapest product."`);
  }
  lines.push("Press Ctrl+C to stop.");
  return lines.join("\n");
}
