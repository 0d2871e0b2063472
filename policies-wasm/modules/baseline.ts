// The baseline policy: the policy file's keys (allowed_origins, denied_paths, read_only,
// confirm_writes, max_actions, max_seconds) applied to the facts of one action or request.
// It may allow only on facts that need no interpretation: origins, methods, form targets.
import { Config, Host } from "@extism/as-pdk";
import { at, bool_, isNull, items, num, str, strings } from "../lib/json";
import { answer, under } from "../lib/verdict";
export { abortHandler } from "../lib/verdict";

/** The policy config, read once: Extism fixes a plugin's config for its whole life. */
class Policy {
  allowedOrigins: string[] = [];
  deniedOrigins: string[] = [];
  deniedPrefixes: string[] = [];
  readOnly: bool = true;
  confirmWrites: bool = false;
  maxActions: f64 = 0;
  maxSeconds: f64 = 0;
}

let cached: Policy | null = null;

function loadPolicy(): Policy | null {
  if (cached != null) return cached;
  const textOrNull = Config.get("policy");
  if (textOrNull == null) return null;
  const text = textOrNull;
  const p = new Policy();
  p.allowedOrigins = strings(text, "allowed_origins");
  const rules = items(text, at(text, "denied_paths"));
  for (let i = 0; i < rules.length; i++) {
    const ruleText = text.substring(rules[i]);
    const o = str(ruleText, "origin");
    const prefix = str(ruleText, "path_prefix");
    if (o == null || prefix == null) continue;
    p.deniedOrigins.push(o);
    p.deniedPrefixes.push(prefix);
  }
  p.readOnly = bool_(text, "read_only", true);
  p.confirmWrites = bool_(text, "confirm_writes", false);
  p.maxActions = num(text, "max_actions", 0);
  p.maxSeconds = num(text, "max_seconds", 0);
  cached = p;
  return p;
}

function allowed(policy: Policy, origin: string | null): bool {
  if (origin == null) return false;
  const list = policy.allowedOrigins;
  for (let i = 0; i < list.length; i++) if (list[i] == origin) return true;
  return false;
}

function pathDenied(policy: Policy, origin: string | null, path: string | null): bool {
  if (origin == null || path == null) return false;
  for (let i = 0; i < policy.deniedOrigins.length; i++) {
    const o = policy.deniedOrigins[i];
    if ((o == "*" || o == origin) && under(path, policy.deniedPrefixes[i])) return true;
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
  const policyOrNull = loadPolicy();
  if (policyOrNull == null) return answer("deny", "POLICY_ERROR", "no policy config");
  const policy = policyOrNull;
  if (num(facts, "abi", 0) != 1) return answer("deny", "POLICY_ERROR", "unsupported facts abi");
  const kindOrNull = str(facts, "kind");
  if (kindOrNull == null) return answer("deny", "POLICY_ERROR", "facts without kind");
  const kind = kindOrNull;

  if (kind == "snapshot" || kind == "wait" || kind == "tab") return answer("allow", "OK", "");

  // Limits stop actions, not reading: a session over its budget can still look.
  if (kind != "request") {
    const maxActions = policy.maxActions;
    if (maxActions > 0 && num(facts, "session.actions_used", 0) >= maxActions) {
      return answer("deny", "LIMIT_ACTIONS", "max_actions");
    }
    const maxSeconds = policy.maxSeconds;
    if (maxSeconds > 0 && num(facts, "session.seconds_elapsed", 0) >= maxSeconds) {
      return answer("deny", "LIMIT_TIME", "max_seconds");
    }
  }

  const readOnly = policy.readOnly;
  const confirmWrites = policy.confirmWrites;

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

  // A kind this module does not know (a newer facts ABI, a malformed input) is never allowed
  // by falling through: only the element actions below reach the element rules.
  if (kind != "click" && kind != "type" && kind != "select" && kind != "key") {
    return answer("deny", "POLICY_ERROR", "unknown kind");
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
