/**
 * The one boundary every decision goes through: agent actions (via the policy gate),
 * requests paused by the request guard, and connections the egress proxy is asked to make.
 * It adds to the policy modules what only the runtime can know: the operator's dynamic
 * domain rules (deny wins; an allow extends `allowed_origins`), the private-address rule
 * and the session's open write hold (`write_hold.ts`: an action's writes held for a human,
 * a login's own submission). Requests are audited here; actions are audited by the tool
 * wrapper once their final verdict is known.
 *
 * @module
 */
import type { AuditEvent, AuditWriter } from "../audit/audit_row.ts";
import { type RequestContext, requestRow } from "./audit_rows.ts";
import { isPrivateHost } from "../net/addresses.ts";
import { normalizeOrigin } from "../net/origin.ts";
import type { DomainSnapshot } from "../store/domain_store.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
import { type Decision, deny } from "../policy/decision.ts";
import type { PolicyEngine } from "../policy/engine.ts";
import type { Facts } from "../policy/facts.ts";
import type { HeldWrite, WriteHold } from "./write_hold.ts";

/** What the boundary needs. */
export interface BoundaryDeps {
  engine: PolicyEngine;
  /** The dynamic domain rules now (`DomainStore.current`): throws when unreadable. */
  domains?: { current(): DomainSnapshot };
  audit?: AuditWriter;
  /** The policy file's `allowed_origins`: exact origins that may be private addresses. */
  allowedOrigins: readonly string[];
  /**
   * Whether a text carries a guarded credential value (`redact/egress_secrets.ts`): such a
   * request leaves only as a login's own submission (`SECRET_IN_REQUEST`). None: no check.
   */
  secretIn?: (text: string) => boolean;
}

/** A boundary verdict, and whether `read_only` alone refused it (a hold may decide it). */
interface Judged extends Decision {
  readOnlyOnly?: boolean;
}

/** The one reason a policy module gives for a write `read_only` refuses. */
const READ_ONLY_WRITE = "READ_ONLY_WRITE";

/** Judges facts for actions and requests. */
export class Boundary {
  #deps: BoundaryDeps;
  #domainGeneration = -1;
  #holds = new Map<string, WriteHold>();
  /** Sessions a runtime workflow confines to a few origins while it runs (a capture). */
  #confined = new Map<string, ReadonlySet<string>>();
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
  get audit(): AuditWriter | undefined {
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
   * Judges one network request and audits the verdict. A write `read_only` alone refused
   * goes to the session's open write hold, with `write` (the bytes the proxy holds): the
   * hold's verdict is about exactly them. The request guard (`Fetch`) never sees a body, so
   * under a hold it lets a write on to the proxy, which holds it whole. `confirm` is a
   * deny. Never throws; a verdict that cannot be audited is a deny.
   */
  async judgeRequest(
    alternatives: Facts | readonly Facts[],
    ctx: RequestContext,
    write?: HeldWrite,
  ): Promise<Decision> {
    const confined = this.#confined.get(ctx.session);
    if (confined) {
      // While a capture runs, nothing of the session reaches an origin its template does not
      // name, read or write: a page holding a one-time code or a minted value has nowhere
      // else to send it.
      const list = Array.isArray(alternatives) ? alternatives : [alternatives as Facts];
      const inside = list.filter((f) => {
        const o = f.target?.origin;
        return typeof o === "string" && confined.has(normalizeOrigin(o) ?? "");
      });
      if (inside.length === 0) {
        return await this.#audited(
          list[0],
          ctx,
          deny("CAPTURE_ORIGIN_NOT_NAMED", { module: "capture" }),
        );
      }
      alternatives = inside;
    }
    // A proxy tunnel may stand for more than one origin (https or ws on one port): the first
    // alternative the policy allows wins, and one row is audited either way.
    const list = Array.isArray(alternatives) ? alternatives : [alternatives as Facts];
    let facts = list[0];
    let j: Judged = { decision: "deny", reason: "GATE_ERROR" };
    for (const [i, f] of list.entries()) {
      let r: Judged;
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
    const { readOnlyOnly = false, ...verdict } = j;
    let d: Decision = verdict;
    const hold = this.#holds.get(ctx.session);
    if (d.decision !== "deny" || readOnlyOnly) {
      // A credential leaves in one request only: the login's own submission, whatever the
      // policy says of its origin, method or anything else.
      const texts = [facts.target?.origin ?? "", write?.url ?? ""];
      // Headers too: a page can put what it read into a cookie, a Referer or an Accept.
      for (const [, v] of write?.headers ?? []) texts.push(v);
      if (write?.body.length) texts.push(new TextDecoder().decode(write.body));
      if (this.carriesSecret(texts)) {
        d = hold?.strict && write && ctx.source === "proxy"
          ? await hold.judge(write, facts).catch(() => deny("GATE_ERROR", { module: "login" }))
          : ctx.source === "request" && hold?.strict
          ? { decision: "allow", reason: "HELD_AT_PROXY", module: "login" }
          : { decision: "deny", reason: "SECRET_IN_REQUEST", module: "runtime" };
        return await this.#audited(facts, ctx, d);
      }
    }
    if (
      hold && isWrite(facts.method) && (readOnlyOnly || (hold.strict && d.decision === "allow"))
    ) {
      if (ctx.source === "request") {
        d = { decision: "allow", reason: "HELD_AT_PROXY", module: "approval" };
      } else if (!write) {
        d = { decision: "deny", reason: "WRITE_UNREADABLE", module: "approval" };
      } else {
        try {
          d = await hold.judge(write, facts);
        } catch {
          d = { decision: "deny", reason: "GATE_ERROR", module: "approval" };
        }
        if (d.decision !== "allow" && d.decision !== "deny") d = { ...d, decision: "deny" };
      }
    }
    return await this.#audited(facts, ctx, d);
  }

  /** Audits a request's final verdict; one that cannot be written is a deny. */
  async #audited(facts: Facts, ctx: RequestContext, verdict: Decision): Promise<Decision> {
    let d = verdict;
    if (d.decision === "confirm") d = { ...d, decision: "deny", reason: "CONFIRM_UNAVAILABLE" };
    try {
      // Committed before the request may go: a page load's burst shares one transaction.
      await this.#deps.audit?.appendSoon(requestRow(facts, ctx, d));
    } catch {
      return { decision: "deny", reason: "AUDIT_UNAVAILABLE" };
    }
    return d;
  }

  /** Whether `session` has a strict (login) hold open: no socket may open during one. */
  holdsStrictly(session: string): boolean {
    return this.#holds.get(session)?.strict === true;
  }

  /** Whether any of `texts` carries a guarded credential value. Fails closed. */
  carriesSecret(texts: readonly string[]): boolean {
    const check = this.#deps.secretIn;
    if (!check) return false;
    try {
      return texts.some((t) => t !== "" && check(t));
    } catch {
      return true;
    }
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

  /**
   * Audits a refusal the boundary did not judge (the proxy's own, a runtime rule's, one after
   * an allow, or Chromium's on a learned tunnel); `egress_ledger.ts` is its one caller.
   */
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
   * Confines `session` to `origins` (to them and those of earlier confinements of it) until
   * the returned function is called: every request to any other origin, of any method, is
   * denied `CAPTURE_ORIGIN_NOT_NAMED` before a policy is asked. A capture confines its
   * session from its start to the session's end: what a vendor's page started (a tab, a
   * worker, a timer) has nowhere else to send what it saw.
   */
  confine(session: string, origins: readonly string[]): () => void {
    const set = new Set(this.#confined.get(session));
    for (const o of origins) {
      const n = normalizeOrigin(o);
      if (n !== undefined) set.add(n);
    }
    this.#confined.set(session, set);
    return () => this.#confined.delete(session);
  }

  /**
   * Opens `hold` for `session`: until the returned function closes it, the session's writes
   * that `read_only` alone refused (every write, for a strict hold) are the hold's to judge.
   * One hold per session at a time (its calls run one after another).
   */
  openHold(session: string, hold: WriteHold): () => void {
    this.#holds.set(session, hold);
    return () => {
      if (this.#holds.get(session) === hold) this.#holds.delete(session);
    };
  }

  async #judge(facts: Facts): Promise<Judged> {
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
    const { verdict, verdicts } = await engine.evaluate(facts);
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
    // Only a deny every module gives for `read_only` alone may be handed to a write hold.
    const denies = verdicts.filter((v) => v.decision !== "allow");
    const readOnlyOnly = verdict.decision === "deny" && denies.length > 0 &&
      denies.every((v) => v.decision === "deny" && v.reason === READ_ONLY_WRITE);
    return {
      decision: verdict.decision,
      reason: verdict.decision === "allow" ? "OK" : verdict.reason,
      module: verdict.module,
      rule: verdict.rule,
      ...(readOnlyOnly ? { readOnlyOnly } : {}),
    };
  }
}

/** Methods that write: what `read_only` refuses (CONNECT is a tunnel, judged per request). */
function isWrite(method: string): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "CONNECT";
}

function originsOf(facts: Facts): string[] {
  const out: string[] = [];
  if (facts.target?.origin) out.push(facts.target.origin);
  if (facts.element?.link_origin) out.push(facts.element.link_origin);
  if (facts.form?.action_origin) out.push(facts.form.action_origin);
  return out;
}
