/**
 * Entry of `runRuntimeBatch` (omotai_cli.ts): runs `main()` of the runtime's CLI once per
 * command line given as JSON in the first argument, one after another in this one process,
 * each with its own captured stdout and stderr, and prints the runs as JSON. The parent
 * starts it with exactly the permissions and variables the launcher gives each of those
 * command lines (they must all be the same).
 *
 * @module
 */
import { main } from "../../runtime/cli/cli.ts";

const lines: string[][] = JSON.parse(Deno.args[0]);
const print = console.log;
const runs: { code: number; stdout: string; stderr: string }[] = [];
for (const args of lines) {
  let stdout = "";
  let stderr = "";
  const text = (data: unknown[]) =>
    data.map((d) => typeof d === "string" ? d : Deno.inspect(d)).join(" ") + "\n";
  console.log = (...data: unknown[]) => void (stdout += text(data));
  console.info = console.log;
  console.error = (...data: unknown[]) => void (stderr += text(data));
  console.warn = console.error;
  let code: number;
  try {
    code = await main(args);
  } catch (err) {
    // What the process's last resort would do with it: a failure, with its stack.
    stderr += `uncaught: ${err instanceof Error ? err.stack : String(err)}\n`;
    code = 70;
  }
  runs.push({ code, stdout, stderr });
}
print(JSON.stringify(runs));
