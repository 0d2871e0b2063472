// The baseline policy: the policy file's keys (allowed_origins, denied_paths, read_only,
// confirm_writes, max_actions, max_seconds) applied to the facts of one action or request.
// It may allow only on facts that need no interpretation: origins, methods, form targets.
import { Config, Host } from "@extism/as-pdk";
import { at, bool_, isNull, items, num, readString, str, strings } from "../lib/json";
import { answer, under } from "../lib/verdict";
export { abortHandler } from "../lib/verdict";

function allowed(policy: string, origin: string | null): bool {
  if (origin == null) return false;
  const list = strings(policy, "allowed_origins");
  for (let i = 0; i < list.length; i++) if (list[i] == origin) return true;
  return false;
}

function pathDenied(policy: string, origin: string | null, path: string | null): bool {
  if (origin == null || path == null) return false;
  const rules = items(policy, at(policy, "denied_paths"));
  for (let i = 0; i < rules.length; i++) {
    const ruleText = policy.substring(rules[i]);
    const o = str(ruleText, "origin");
    const p = str(ruleText, "path_prefix");
    if (o == null || p == null) continue;
    if ((o == "*" || o == origin) && under(path, p)) return true;
  }
  return false;
}

// CONNECT is the egress proxy's tunnel to an allowed origin: it carries requests that the
// request guard judged one by one, so it is not itself a write.
function isWrite(method: string): bool {
  return method != "GET" && method != "HEAD" && method != "CONNECT";
}

export function verdict(): i32 {
  const facts = Host.inputString();
  const policyOrNull = Config.get("policy");
  if (policyOrNull == null) return answer("deny", "POLICY_ERROR", "no policy config");
  const policy = policyOrNull;
  if (num(facts, "abi", 0) != 1) return answer("deny", "POLICY_ERROR", "unsupported facts abi");
  const kindOrNull = str(facts, "kind");
  if (kindOrNull == null) return answer("deny", "POLICY_ERROR", "facts without kind");
  const kind = kindOrNull;

  if (kind == "snapshot" || kind == "wait" || kind == "tab") return answer("allow", "OK", "");

  // Limits stop actions, not reading: a session over its budget can still look.
  if (kind != "request") {
    const maxActions = num(policy, "max_actions", 0);
    if (maxActions > 0 && num(facts, "session.actions_used", 0) >= maxActions) {
      return answer("deny", "LIMIT_ACTIONS", "max_actions");
    }
    const maxSeconds = num(policy, "max_seconds", 0);
    if (maxSeconds > 0 && num(facts, "session.seconds_elapsed", 0) >= maxSeconds) {
      return answer("deny", "LIMIT_TIME", "max_seconds");
    }
  }

  const readOnly = bool_(policy, "read_only", true);
  const confirmWrites = bool_(policy, "confirm_writes", false);

  if (kind == "navigate" || kind == "back" || kind == "request") {
    if (isNull(facts, at(facts, "target"))) return answer("deny", "TARGET_UNKNOWN", "");
    const scheme = str(facts, "target.scheme");
    if (scheme == null || (scheme != "http" && scheme != "https")) {
      return answer("deny", "SCHEME_NOT_ALLOWED", "http(s) only");
    }
    const origin = str(facts, "target.origin");
    if (!allowed(policy, origin)) return answer("deny", "ORIGIN_NOT_ALLOWED", "allowed_origins");
    if (pathDenied(policy, origin, str(facts, "target.path"))) {
      return answer("deny", "PATH_DENIED", "denied_paths");
    }
    const method = str(facts, "method");
    if (method == null) return answer("deny", "POLICY_ERROR", "facts without method");
    if (readOnly && isWrite(method)) return answer("deny", "READ_ONLY_WRITE", "read_only");
    return answer("allow", "OK", "");
  }

  // click, type, select, key: the element and the form it belongs to.
  const linkScheme = str(facts, "element.link_scheme");
  if (linkScheme != null && linkScheme != "http" && linkScheme != "https") {
    return answer("deny", "SCHEME_NOT_ALLOWED", "link scheme");
  }
  const linkOrigin = str(facts, "element.link_origin");
  if (!isNull(facts, at(facts, "element.link_origin"))) {
    if (!allowed(policy, linkOrigin)) {
      return answer("deny", "LINK_ORIGIN_NOT_ALLOWED", "allowed_origins");
    }
    if (pathDenied(policy, linkOrigin, str(facts, "element.link_path"))) {
      return answer("deny", "PATH_DENIED", "denied_paths");
    }
  }
  if (!isNull(facts, at(facts, "form"))) {
    const actionOrigin = str(facts, "form.action_origin");
    if (!allowed(policy, actionOrigin)) {
      return answer("deny", "FORM_DESTINATION_NOT_ALLOWED", "allowed_origins");
    }
    if (bool_(facts, "form.submits", true)) {
      if (pathDenied(policy, actionOrigin, str(facts, "form.action_path"))) {
        return answer("deny", "PATH_DENIED", "denied_paths");
      }
      const method = str(facts, "form.method");
      if (method == null) return answer("deny", "POLICY_ERROR", "form without method");
      if (readOnly && isWrite(method)) {
        if (confirmWrites) return answer("confirm", "READ_ONLY_SUBMIT", "confirm_writes");
        return answer("deny", "READ_ONLY_SUBMIT", "read_only");
      }
    }
  }
  return answer("allow", "OK", "");
}
