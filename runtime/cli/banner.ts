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

/** Replaces the quickstart agent's key and returns the new one (printed once, in the banner). */
export function quickstartKey(runtime: Runtime): string {
  runtime.agents.remove(QUICKSTART_AGENT);
  return runtime.agents.add(QUICKSTART_AGENT).key;
}

/** The text `omotai start --mode sse` prints once it listens; `key` is an agent's key. */
export function banner(runtime: Runtime, version: string, key: string): string {
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
