/**
 * The one boundary every decision goes through: agent actions (via the policy gate),
 * requests paused by the request guard, and connections the egress proxy is asked to make.
 * It adds to the policy modules what only the runtime can know: the operator's dynamic
 * domain rules (deny wins; an allow extends `allowed_origins`), the private-address rule
 * and the write window of an approved submit. Requests are audited here; actions are
 * audited by the tool wrapper once their final verdict is known.
 *
 * @module
 */
import type { AuditLog } from "../audit/audit_log.ts";
import type { AuditEvent } from "../audit/audit_row.ts";
import { type RequestContext, requestRow } from "./audit_rows.ts";
import { isPrivateHost } from "../net/addresses.ts";
import type { DomainRules } from "./domains.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
import type { Decision } from "../policy/decision.ts";
import type { PolicyEngine } from "../policy/engine.ts";
import type { Facts } from "../policy/facts.ts";

/** What the boundary needs. */
export interface BoundaryDeps {
  engine: PolicyEngine;
  domains?: DomainRules;
  audit?: AuditLog;
  /** The policy file's `allowed_origins`: exact origins that may be private addresses. */
  allowedOrigins: readonly string[];
}

/** Exactly one request that an approval lets through: method, origin and canonical path. */
export interface WriteWindow {
  method: string;
  origin: string;
  path: string;
}

/** A window while it is open: which layers have let its request through. */
interface OpenWindow extends WriteWindow {
  used: Set<RequestContext["source"]>;
}

/** What a proxy-seen request may be to use a write window (Sec-Fetch-Dest, or none known). */
const WINDOW_DESTS = new Set(["document", "iframe", "frame", "proxy"]);

/** Judges facts for actions and requests. */
export class Boundary {
  #deps: BoundaryDeps;
  #domainGeneration = -1;
  #windows = new Map<string, OpenWindow>();
  /** The runtime's own origins (console, MCP): never reachable from the browser. */
  #reserved = new Set<string>();

  constructor(deps: BoundaryDeps) {
    this.#deps = deps;
  }

  /**
   * Reserves the runtime's own origins (its console and MCP endpoint): every action and
   * request to one is denied `RUNTIME_ORIGIN`, whatever a policy or domain rule says.
   */
  reserve(origins: readonly string[]): void {
    for (const o of origins) this.#reserved.add(o);
  }

  /**
   * The generation of the operator's domain rules the last decision was made under (it moves
   * whenever the rules change): what was learned from earlier verdicts holds only under it.
   */
  get domainGeneration(): number {
    return this.#domainGeneration;
  }

  /** The audit log, when there is one. */
  get audit(): AuditLog | undefined {
    return this.#deps.audit;
  }

  /** Judges an agent action's facts (not audited here). Never throws. */
  async judge(facts: Facts): Promise<Decision> {
    try {
      return await this.#judge(facts);
    } catch (err) {
      return { decision: "deny", reason: err instanceof OmotaiError ? err.code : "GATE_ERROR" };
    }
  }

  /**
   * Judges one network request and audits the verdict. `confirm` is a deny unless an
   * approved submit opened the write window for exactly this method and URL. Never throws;
   * a verdict that cannot be audited is a deny.
   */
  async judgeRequest(
    alternatives: Facts | readonly Facts[],
    ctx: RequestContext,
  ): Promise<Decision> {
    // A proxy tunnel may stand for more than one origin (https or ws on one port): the first
    // alternative the policy allows wins, and one row is audited either way.
    const list = Array.isArray(alternatives) ? alternatives : [alternatives as Facts];
    let facts = list[0];
    let j: Decision = { decision: "deny", reason: "GATE_ERROR" };
    for (const [i, f] of list.entries()) {
      let r: Decision;
      try {
        r = await this.#judge(f);
      } catch (err) {
        r = { decision: "deny", reason: err instanceof OmotaiError ? err.code : "GATE_ERROR" };
      }
      if (i === 0 || r.decision === "allow") {
        j = r;
        facts = f;
      }
      if (r.decision === "allow") break;
    }
    if (j.decision !== "allow" && this.#useWindow(ctx, facts)) {
      j = { decision: "allow", reason: "WRITE_WINDOW", module: "approval" };
    }
    if (j.decision === "confirm") j = { ...j, decision: "deny", reason: "CONFIRM_UNAVAILABLE" };
    try {
      // Committed before the request may go: a page load's burst shares one transaction.
      await this.#deps.audit?.appendSoon(requestRow(facts, ctx, j));
    } catch {
      return { decision: "deny", reason: "AUDIT_UNAVAILABLE" };
    }
    return j;
  }

  /**
   * Whether `origin` is listed exactly (policy file or operator allow, not denied): only
   * such an origin may resolve to a private or loopback address.
   */
  isExactlyAllowed(origin: string | null | undefined): boolean {
    if (!origin) return false;
    try {
      const rules = this.#deps.domains?.current();
      if (rules?.deny.has(origin)) return false;
      return this.#deps.allowedOrigins.includes(origin) || rules?.allow.has(origin) === true;
    } catch {
      return false;
    }
  }

  /** Audits a request the egress proxy refused after the policy allowed it. */
  recordRefusal(facts: Facts, ctx: RequestContext, reason: string): void {
    try {
      this.record(requestRow(facts, ctx, { decision: "deny", reason, module: "runtime" }));
    } catch (err) {
      // Through log(), so the line is redacted like every other.
      log(`audit: ${(err as Error).message.slice(0, 200)}`);
    }
  }

  /** Appends an audit row; throws `AUDIT_UNAVAILABLE` when it cannot. */
  record(event: AuditEvent): void {
    this.#deps.audit?.append(event);
  }

  /**
   * Opens the write window of an approved submit: during the action, exactly this method
   * and URL may be written once even under `read_only`. Returns the function that closes it.
   */
  openWriteWindow(session: string, approved: WriteWindow): () => void {
    const window: OpenWindow = {
      ...approved,
      method: approved.method.toUpperCase(),
      used: new Set(),
    };
    this.#windows.set(session, window);
    return () => {
      if (this.#windows.get(session) === window) this.#windows.delete(session);
    };
  }

  /**
   * Whether `facts` is the approved write, which each layer lets through once: the request
   * guard and the proxy judge the same request (a second one of either is refused).
   */
  #useWindow(ctx: RequestContext, facts: Facts): boolean {
    const w = this.#windows.get(ctx.session);
    if (!w || !facts.target?.origin || facts.target.path === null) return false;
    const matches = w.method === facts.method && w.origin === facts.target.origin &&
      w.path === facts.target.path;
    if (!matches || w.used.has(ctx.source)) return false;
    // The request guard sees what made the request: only a document (the approved form's
    // submission) may use the window, never a script's fetch, XHR or beacon to that URL.
    if (ctx.source === "request" && facts.resource_type !== "document") return false;
    // The proxy has the browser's Sec-Fetch-Dest where Chromium sends it (secure and loopback
    // origins): there too only a document or frame navigation, never `empty` (fetch, XHR,
    // beacon). Without it (`proxy`: plain http elsewhere) the proxy cannot tell.
    if (ctx.source === "proxy" && !WINDOW_DESTS.has(facts.resource_type)) return false;
    w.used.add(ctx.source);
    return true;
  }

  async #judge(facts: Facts): Promise<Decision> {
    const { engine, domains } = this.#deps;
    const rules = domains?.current();
    if (rules && rules.generation !== this.#domainGeneration) {
      await engine.setExtraAllowedOrigins([...rules.allow]);
      if (this.#domainGeneration !== -1) {
        this.record({
          kind: "domains_changed",
          source: "lifecycle",
          decision: "event",
          reason: `${rules.allow.size} allow, ${rules.deny.size} deny`,
        });
      }
      this.#domainGeneration = rules.generation;
    }
    for (const origin of originsOf(facts)) {
      if (this.#reserved.has(origin)) {
        return { decision: "deny", reason: "RUNTIME_ORIGIN", module: "runtime", rule: origin };
      }
    }
    for (const origin of originsOf(facts)) {
      if (rules?.deny.has(origin)) {
        return { decision: "deny", reason: "DOMAIN_DENIED", module: "domains", rule: origin };
      }
    }
    const { verdict } = await engine.evaluate(facts);
    // Stricter only: a module's allow of a private address needs that exact origin listed.
    const target = facts.target?.origin;
    if (
      verdict.decision !== "deny" && target &&
      isPrivateHost(new URL(target).hostname)
    ) {
      if (!this.isExactlyAllowed(target)) {
        return { decision: "deny", reason: "PRIVATE_ADDRESS", module: "runtime" };
      }
    }
    return {
      decision: verdict.decision,
      reason: verdict.decision === "allow" ? "OK" : verdict.reason,
      module: verdict.module,
      rule: verdict.rule,
    };
  }
}

function originsOf(facts: Facts): string[] {
  const out: string[] = [];
  if (facts.target?.origin) out.push(facts.target.origin);
  if (facts.element?.link_origin) out.push(facts.element.link_origin);
  if (facts.form?.action_origin) out.push(facts.form.action_origin);
  return out;
}
