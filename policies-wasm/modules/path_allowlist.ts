// Example module: navigation, link clicks and requests may only reach paths under
// `allowed_paths` (config, canonical paths). Everything else passes through.
import { Config, Host } from "@extism/as-pdk";
import { at, isNull, str, strings } from "../lib/json";
import { answer, under } from "../lib/verdict";
export { abortHandler } from "../lib/verdict";

function listed(paths: string[], path: string | null): bool {
  if (path == null) return false;
  for (let i = 0; i < paths.length; i++) if (under(path, paths[i])) return true;
  return false;
}

// Read once: Extism fixes a plugin's config for its whole life.
let cachedPaths: string[] | null = null;

export function verdict(): i32 {
  const facts = Host.inputString();
  if (cachedPaths == null) {
    const config = Config.get("policy");
    if (config == null) return answer("deny", "POLICY_ERROR", "no policy config");
    cachedPaths = strings(config, "allowed_paths");
  }
  const paths = cachedPaths!;
  const kind = str(facts, "kind");
  if (kind == "navigate" || kind == "request" || kind == "back") {
    if (isNull(facts, at(facts, "target.path"))) return answer("allow", "OK", "");
    if (!listed(paths, str(facts, "target.path"))) {
      return answer("deny", "PATH_NOT_ALLOWED", "allowed_paths");
    }
  }
  if (!isNull(facts, at(facts, "element.link_path"))) {
    if (!listed(paths, str(facts, "element.link_path"))) {
      return answer("deny", "PATH_NOT_ALLOWED", "allowed_paths");
    }
  }
  return answer("allow", "OK", "");
}
