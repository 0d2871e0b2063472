/**
 * The process's one redactor, shared by everything that sends text out of the runtime.
 *
 * Loading this module puts the redactor in front of `runtime/log.ts`, so every log line is
 * redacted from then on; the audit log, its JSONL mirror and the MCP server use it by
 * default. It starts empty (and costs nothing while it is). The runtime fills it once the
 * vault is open, before it serves a connection, and again whenever a secret is added:
 *
 * ```ts
 * import { processRedactor } from "../redact/mod.ts";
 * processRedactor().add(vault.values()); // in runtime/cli/start.ts
 * ```
 *
 * @module
 */
import { addLogFilter } from "../mod.ts";
import { Redactor } from "./redactor.ts";

const shared = new Redactor();
// At load, not at the first add(): whoever adds a value has imported this module, so no
// secret is known before the log is covered.
addLogFilter((line) => shared.redact(line));

/** The redactor every outbound path of this process uses. */
export function processRedactor(): Redactor {
  return shared;
}
