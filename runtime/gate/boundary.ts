/**
 * The one boundary every decision goes through: agent actions (via the policy gate),
 * requests paused by the request guard, and connections the egress proxy is asked to make.
 * It adds to the policy modules what only the runtime can know: the runtime's own origins,
 * the operator's dynamic domain rules (deny wins; an allow extends `allowed_origins`), the
 * address rule (`net/address_rule.ts`, re-exported here), the WebSocket rule, a capture's
 * confinement, the request guard's tickets, the credential check and the session's open
 * write hold (`write_hold.ts`: an action's writes held for a human, a login's own
 * submission). Every egress refusal code is raised here or in what this calls; each one's
 * home is listed in docs/egress.md and `boundary_homes_test.ts` keeps it there. The request
 * guard and the egress proxy only ask and enforce. Requests are audited here; actions are
 * audited by the tool wrapper once their final verdict is known.
 *
 * @module
 */
import type { AuditEvent, AuditWriter, DomainSnapshot } from "../store/mod.ts";
import { type RequestContext, requestRow } from "./audit_rows.ts";
import { addressRule, normalizeOrigin } from "../net/mod.ts";
import { log, OmotaiError } from "../mod.ts";
import { type Decision, deny, type Facts, type PolicyEngine } from "../policy/mod.ts";
import { type HeldWrite, HOLD_CODES, socketDuringHold, type WriteHold } from "./write_hold.ts";

/**
 * The address rule is the boundary's: applied here to a request's name, and by the egress
 * proxy (which may import only `net/`) to the DNS answer, with the boundary's `exact`.
 */
export { type AddressFacts, type AddressRefusal, addressRule } from "../net/mod.ts";

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
  /** The policy's WebSocket rule; none: sockets are judged like any other request. */
  websockets?: WebSocketRule;
}

/**
 * The policy's WebSocket rule: under `read_only`, an upgrade to `websocket` is refused
 * (`WEBSOCKET_REFUSED`) unless its origin is listed (`websockets:`), since what a socket
 * carries after the handshake cannot be told apart into reads and writes. A runtime rule
 * that only ever makes the modules' verdict stricter.
 */
export interface WebSocketRule {
  readOnly: boolean;
  allowed: readonly string[];
}

/**
 * What the egress proxy holds of one request beyond its facts (the request guard has none of
 * it): what the write hold, the credential check, the WebSocket rule and the ticket path read.
 */
export interface ProxyRequest {
  /** The request whole (a write's body; empty for a read), with its `Sec-Fetch-*`. */
  write?: HeldWrite;
  /** The protocol its `Upgrade` header asks for, if any. */
  upgrade?: string;
  /**
   * The session's guard tickets (`egress/guard_tickets.ts`): a read the request guard allowed
   * with its page facts (and audited then) is let through once on that verdict.
   */
  tickets?: { take(method: string, url: string): boolean };
}

/** A boundary verdict, and whether `read_only` alone refused it (a hold may decide it). */
interface Judged extends Decision {
  readOnlyOnly?: boolean;
}

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
   * Judges one network request and audits the verdict. A WebSocket handshake is refused
   * while a strict hold is open, and under the WebSocket rule. A write `read_only` alone
   * refused goes to the session's open write hold, with `request.write` (the bytes the proxy
   * holds): the hold's verdict is about exactly them. The request guard (`Fetch`) never sees
   * a body, so under a hold it lets a write on to the proxy, which holds it whole. A read
   * with a guard ticket is allowed on the guard's verdict and row (not audited again).
   * `confirm` is a deny. Never throws; a verdict that cannot be audited is a deny.
   */
  async judgeRequest(
    alternatives: Facts | readonly Facts[],
    ctx: RequestContext,
    request: ProxyRequest = {},
  ): Promise<Decision> {
    const { write, upgrade, tickets } = request;
    const socket = upgrade === "websocket" || write?.mode === "websocket";
    if (socket) {
      const refusal = this.#socketRefusal(ctx.session, write?.url);
      if (refusal) return await this.#audited(first(alternatives), ctx, refusal);
    }
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
        const { notNamed, module } = HOLD_CODES.capture;
        return await this.#audited(list[0], ctx, deny(notNamed, { module }));
      }
      alternatives = inside;
    }
    if (
      write && !socket && upgrade === undefined && !this.carriesSecret([write.url]) &&
      tickets?.take(write.method, write.url)
    ) {
      // The ticket stands for the guard's verdict on this URL and its audit row; a credential
      // in the URL is never let through on one (judged below, as ever).
      return { decision: "allow", reason: "OK" };
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

  /**
   * The refusal of a WebSocket handshake to `url`, if any: none opens while a strict hold is
   * open (a socket carries writes the hold could never see), and under `read_only` only to
   * an origin the policy lists in `websockets:`.
   */
  #socketRefusal(session: string, url: string | undefined): Decision | undefined {
    if (this.holdsStrictly(session)) return socketDuringHold();
    const rule = this.#deps.websockets;
    if (!rule?.readOnly) return undefined;
    const origin = url === undefined ? null : socketOrigin(url);
    const listed = origin !== null && rule.allowed.some((o) => normalizeOrigin(o) === origin);
    return listed ? undefined : deny("WEBSOCKET_REFUSED", { module: "runtime" });
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
   * Audits a refusal the boundary's verdict did not carry (the proxy's own, the address
   * rule's on a DNS answer, one after an allow, or Chromium's on a learned tunnel);
   * `egress_ledger.ts` is its one caller.
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
    if (verdict.decision !== "deny" && target) {
      // The name alone here: its DNS answer is the proxy's to check, by the same rule.
      const refused = addressRule(
        { host: new URL(target).hostname },
        () => this.isExactlyAllowed(target),
      );
      if (refused) return { decision: "deny", reason: refused, module: "runtime" };
    }
    // Only a deny every module gives for `read_only` alone (`READ_ONLY_WRITE`, the one reason
    // a policy module gives for a write `read_only` refuses) may be handed to a write hold.
    const denies = verdicts.filter((v) => v.decision !== "allow");
    const readOnlyOnly = verdict.decision === "deny" && denies.length > 0 &&
      denies.every((v) => v.decision === "deny" && v.reason === "READ_ONLY_WRITE");
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

/** The first of a request's alternatives (the one a refusal before the policy audits). */
function first(alternatives: Facts | readonly Facts[]): Facts {
  return Array.isArray(alternatives) ? alternatives[0] : alternatives as Facts;
}

/** The origin of a ws/wss/http(s) URL as the `websockets` key lists it (ws → http). */
function socketOrigin(url: string): string | null {
  try {
    const u = new URL(url);
    const scheme = u.protocol === "wss:" ? "https:" : u.protocol === "ws:" ? "http:" : u.protocol;
    return normalizeOrigin(`${scheme}//${u.host}`) ?? null;
  } catch {
    return null;
  }
}

function originsOf(facts: Facts): string[] {
  const out: string[] = [];
  if (facts.target?.origin) out.push(facts.target.origin);
  if (facts.element?.link_origin) out.push(facts.element.link_origin);
  if (facts.form?.action_origin) out.push(facts.form.action_origin);
  return out;
}
