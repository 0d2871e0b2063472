// Helpers every module uses to answer.
import { Host } from "@extism/as-pdk";
import { quote } from "./json";

/** Writes a verdict as the module's output. */
export function answer(decision: string, reason: string, rule: string): i32 {
  let out = '{"decision":' + quote(decision) + ',"reason":' + quote(reason);
  if (rule.length > 0) out += ',"rule":' + quote(rule);
  Host.outputString(out + "}");
  return 0;
}

/** Required by AssemblyScript; a trap here becomes POLICY_ERROR on the host. */
export function abortHandler(
  message: string | null,
  fileName: string | null,
  lineNumber: u32,
  columnNumber: u32,
): void {
  unreachable();
}

/** Whether `path` equals `prefix` or lies below it on whole segments (both canonical). */
export function under(path: string, prefix: string): bool {
  if (prefix == "/") return true;
  return path == prefix || path.startsWith(prefix + "/");
}
