/**
 * The baseline policy as a plain TypeScript function: the benchmark's point of comparison,
 * and a differential check that the WASM module decides the same.
 *
 * @module
 */
import type { Facts } from "../runtime/policy/facts.ts";
import type { ModuleOutput } from "../runtime/policy/verdict.ts";

/** The config keys the baseline reads. */
export interface BaselineConfig {
  allowed_origins: string[];
  denied_paths: { origin: string; path_prefix: string }[];
  read_only: boolean;
  confirm_writes: boolean;
  max_actions: number;
  max_seconds: number;
}

const under = (path: string, prefix: string) =>
  prefix === "/" || path === prefix || path.startsWith(prefix + "/");

/** Same rules, same order, as policies-wasm/modules/baseline.ts. */
export function baselineVerdict(f: Facts, c: BaselineConfig): ModuleOutput {
  const allowed = (o: string | null) => o !== null && c.allowed_origins.includes(o);
  const denied = (o: string | null, p: string | null) =>
    o !== null && p !== null &&
    c.denied_paths.some((d) => (d.origin === "*" || d.origin === o) && under(p, d.path_prefix));
  const write = (m: string) => m !== "GET" && m !== "HEAD" && m !== "CONNECT";
  if (f.kind === "snapshot" || f.kind === "wait" || f.kind === "tab") {
    return { decision: "allow", reason: "OK" };
  }
  if (f.kind !== "request") {
    if (c.max_actions > 0 && f.session.actions_used >= c.max_actions) {
      return { decision: "deny", reason: "LIMIT_ACTIONS", rule: "max_actions" };
    }
    if (c.max_seconds > 0 && f.session.seconds_elapsed >= c.max_seconds) {
      return { decision: "deny", reason: "LIMIT_TIME", rule: "max_seconds" };
    }
  }
  if (f.kind === "navigate" || f.kind === "back" || f.kind === "request") {
    if (!f.target) return { decision: "deny", reason: "TARGET_UNKNOWN" };
    if (f.target.scheme !== "http" && f.target.scheme !== "https") {
      return { decision: "deny", reason: "SCHEME_NOT_ALLOWED", rule: "http(s) only" };
    }
    if (!allowed(f.target.origin)) {
      return { decision: "deny", reason: "ORIGIN_NOT_ALLOWED", rule: "allowed_origins" };
    }
    if (denied(f.target.origin, f.target.path)) {
      return { decision: "deny", reason: "PATH_DENIED", rule: "denied_paths" };
    }
    if (c.read_only && write(f.method)) {
      return { decision: "deny", reason: "READ_ONLY_WRITE", rule: "read_only" };
    }
    return { decision: "allow", reason: "OK" };
  }
  const el = f.element;
  if (el?.link_scheme && el.link_scheme !== "http" && el.link_scheme !== "https") {
    return { decision: "deny", reason: "SCHEME_NOT_ALLOWED", rule: "link scheme" };
  }
  if (el && el.link_origin !== null) {
    if (!allowed(el.link_origin)) {
      return { decision: "deny", reason: "LINK_ORIGIN_NOT_ALLOWED", rule: "allowed_origins" };
    }
    if (denied(el.link_origin, el.link_path)) {
      return { decision: "deny", reason: "PATH_DENIED", rule: "denied_paths" };
    }
  }
  if (f.form) {
    if (!allowed(f.form.action_origin)) {
      return { decision: "deny", reason: "FORM_DESTINATION_NOT_ALLOWED", rule: "allowed_origins" };
    }
    if (f.form.submits) {
      if (denied(f.form.action_origin, f.form.action_path)) {
        return { decision: "deny", reason: "PATH_DENIED", rule: "denied_paths" };
      }
      if (c.read_only && write(f.form.method)) {
        return c.confirm_writes
          ? { decision: "confirm", reason: "READ_ONLY_SUBMIT", rule: "confirm_writes" }
          : { decision: "deny", reason: "READ_ONLY_SUBMIT", rule: "read_only" };
      }
    }
  }
  return { decision: "allow", reason: "OK" };
}
