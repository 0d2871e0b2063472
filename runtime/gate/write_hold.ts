/**
 * Write holds: what decides a write the policy's `read_only` refused while an agent action
 * runs, and every write while the runtime sends its own (a login, a credential capture). The egress proxy holds every write whole (method, full URL,
 * `Content-Type`, body bytes) and asks with it; the boundary hands it to the session's open
 * hold, and the hold's verdict is about exactly those bytes, which the proxy then sends once.
 *
 * - An **action hold** (`actionHold`) is opened for an agent action the policy would
 *   `confirm` (a form submit under `confirm_writes`), and for every action when the policy
 *   lets script writes be asked for (`script_writes: confirm`). Each held write is shown to
 *   the operator, decoded (`net/request_view.ts`), and waits for their answer.
 * - A **runtime hold** (`runtimeHold`) is opened while the runtime sends a request of its own:
 *   a login form it filled (only that form's own submission, to its own action, with exactly
 *   the entries the form held when the runtime filled it), or one step of a credential capture
 *   (`purpose: "capture"`: the step's form, or its own fetch). No human is asked.
 *
 * @module
 */
import { canonicalPath, normalizeOrigin, type RequestView, requestView } from "../net/mod.ts";
import { type Decision, deny, type Facts, type RuntimeDenyReason } from "../policy/mod.ts";
import type { ApprovalOutcome, Approver } from "./approver.ts";

/** A write the egress proxy holds, whole: the bytes a verdict is about. */
export interface HeldWrite {
  method: string;
  /** The full URL, query included. */
  url: string;
  contentType: string | null;
  body: Uint8Array;
  /** The browser's `Sec-Fetch-Dest` and `Sec-Fetch-Mode`, when it sent them. */
  dest?: string;
  mode?: string;
  /** Every header the request carries upstream (the operator sees those a page may set). */
  headers?: readonly (readonly [string, string])[];
}

/** Decides the writes of one session while it is open. */
export interface WriteHold {
  /**
   * A strict hold decides every write of the session, allowed by the policy or not (a login
   * writes only its own request); any other decides only writes `read_only` alone refused.
   */
  readonly strict: boolean;
  judge(write: HeldWrite, facts: Facts): Promise<Decision>;
}

/** What one held write came to, for the agent's answer (no URL path, no value). */
export interface HeldOutcome {
  method: string;
  origin: string | null;
  kind: WriteKind;
  decision: "allow" | "deny";
  reason: string;
}

/** A form's own navigation submission, or anything else a page sends (fetch, XHR, beacon). */
export type WriteKind = "form" | "script";

/** The form an action submits, from its facts. */
export interface HeldForm {
  method: string;
  origin: string | null;
  path: string | null;
}

/** What an action hold needs, per action. */
export interface ActionHoldOptions {
  approver: Approver;
  session: string;
  agent: string | null;
  tool: string;
  /** The form the action submits when the policy said `confirm`; none for other actions. */
  form?: HeldForm;
  /** The page's origin, shown to the operator beside the request. */
  pageOrigin: string | null;
  /** Whether writes other than the form's own submission may be asked for. */
  scriptWrites: boolean;
  timeoutMs: number;
  maxConfirmations: number;
  /** Approvals the session has used so far, and counting one more. */
  confirmations: { used(): number; count(): void };
  /** Redacts stored secrets from what the operator is shown. */
  redact: (text: string) => string;
  /** The agent's call: its cancellation withdraws every pending approval. */
  signal?: AbortSignal;
}

/** An action hold as the pipeline drives it. */
export interface ActionHold extends WriteHold {
  /** Resolves once no held write is waiting for a decision (new ones may still arrive). */
  drain(): Promise<void>;
  /** Every held write so far, in order. */
  readonly outcomes: readonly HeldOutcome[];
}

const FORM_TYPES = new Set([
  "application/x-www-form-urlencoded",
  "multipart/form-data",
  "text/plain",
]);

/**
 * Whether `write` is `form`'s own submission: a top-level navigation (an iframe target is
 * how a cancelled submit is replayed out of sight) to the form's action origin and path in
 * a form encoding. Without `Sec-Fetch-*` (plain http to a non-secure origin) the proxy
 * cannot tell a navigation from a fetch, so only the form's exact method, origin and path
 * count; the query and body are shown to the operator either way.
 */
export function isFormSubmission(write: HeldWrite, form: HeldForm | undefined): boolean {
  if (!form || form.origin === null || form.path === null) return false;
  let url: URL;
  try {
    url = new URL(write.url);
  } catch {
    return false;
  }
  if (normalizeOrigin(url.origin) !== form.origin) return false;
  if (canonicalPath(url.pathname) !== form.path) return false;
  if (write.method !== form.method.toUpperCase()) return false; // as sent: `post` is not POST
  const type = (write.contentType ?? "").split(";")[0].trim().toLowerCase();
  if (write.body.length > 0 && !FORM_TYPES.has(type)) return false;
  if (write.dest === undefined && write.mode === undefined) return true;
  return write.dest === "document" && write.mode === "navigate";
}

/** Opens a hold for one agent action; every held write is asked of the operator. */
export function actionHold(options: ActionHoldOptions): ActionHold {
  const pending = new Set<Promise<unknown>>();
  const outcomes: HeldOutcome[] = [];
  const ask = async (write: HeldWrite, facts: Facts, kind: WriteKind): Promise<Decision> => {
    if (kind === "script" && !options.scriptWrites) {
      return deny("SCRIPT_WRITE_REFUSED", { module: "approval" });
    }
    if (options.confirmations.used() >= options.maxConfirmations) {
      return deny("CONFIRM_LIMIT", { module: "approval" });
    }
    if (options.signal?.aborted) return deny("CONFIRM_WITHDRAWN", { module: "approval" });
    let request: RequestView;
    try {
      request = requestView({
        method: write.method,
        url: write.url,
        contentType: write.contentType,
        body: write.body,
        headers: write.headers,
      }, options.redact);
    } catch {
      return deny("CONFIRM_UNAVAILABLE", { module: "approval" });
    }
    const origin = facts.target?.origin ?? null;
    const answer = await options.approver.request({
      session: options.session,
      agent: options.agent,
      tool: options.tool,
      facts,
      detail: `${write.method} ${kind === "form" ? "form" : "request"} to ${origin ?? "?"}`,
      details: {
        // A host name is page data too: a page can put a secret in one.
        origin: options.redact(options.pageOrigin ?? origin ?? "unknown"),
        kind,
        request,
      },
      timeoutMs: options.timeoutMs,
    }, options.signal).catch((): ApprovalOutcome => ({
      outcome: "denied",
      reason: "CONFIRM_UNAVAILABLE",
    }));
    if (answer.outcome === "approved") {
      options.confirmations.count();
      return { decision: "allow", reason: "APPROVED", module: "approval" };
    }
    return deny(answer.outcome === "timeout" ? "CONFIRM_TIMEOUT" : answer.reason, {
      module: "approval",
    });
  };
  return {
    strict: false,
    outcomes,
    async judge(write, facts) {
      const kind: WriteKind = isFormSubmission(write, options.form) ? "form" : "script";
      const p = ask(write, facts, kind).catch(() => deny("GATE_ERROR", { module: "approval" }));
      pending.add(p);
      try {
        const d = await p;
        outcomes.push({
          method: write.method,
          origin: facts.target?.origin ?? null,
          kind,
          decision: d.decision === "allow" ? "allow" : "deny",
          reason: d.reason,
        });
        return d;
      } finally {
        pending.delete(p);
      }
    },
    async drain() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

/**
 * The runtime's own hold. Opened before a login's first value is typed (or before a capture's
 * step), it admits nothing until the runtime has said what it sends (`expect`): a page that
 * writes as the values are typed is refused like any other.
 */
export interface RuntimeHold extends WriteHold {
  /**
   * The one submission to admit, once; null when it cannot be known exactly (none then). A
   * later call starts another step (a capture's next request).
   */
  expect(submission: RuntimeSubmission | null): void;
  /**
   * Resolves once the hold has judged a top-level navigation (the form's own submission, or
   * what a page made of it), or after `ms`: true when one was judged. A beacon, fetch or frame
   * copy sent first does not end the wait: the form's own submission may still be on its way
   * on a busy machine.
   */
  settled(ms: number): Promise<boolean>;
  /** The first refusal's code, if any. */
  readonly refused: string | undefined;
  /** Whether the expected submission went out. */
  readonly admitted: boolean;
}

/** The one request a runtime's own step may write (a login's submission, a capture's step). */
export interface RuntimeSubmission {
  method: string;
  /** The form's action URL as the runtime read it when it filled the form. */
  url: string;
  /** The entries the form held once filled, as the form would encode them. */
  entries: readonly (readonly [string, string])[];
  /**
   * `fetch`: the runtime's own request from its isolated world (a capture's code conversion),
   * not a form's navigation: exactly this method and URL, with an empty body.
   */
  request?: "navigation" | "fetch";
  /**
   * Under `read_only`, the origins the policy names for logins (`login_submit_origins`);
   * undefined when it names none.
   */
  namedOrigins?: readonly string[];
}

/** What a runtime's own hold is for: a login's submission, or one step of a capture. */
export interface RuntimeHoldOptions {
  /** `login` (the default) or `capture`: names the hold's verdicts and their module. */
  purpose?: "login" | "capture";
}

/**
 * The codes of a runtime hold, by purpose: their one home (docs/egress.md). A capture's
 * `notNamed` is also what the boundary's confinement of a capture's session refuses with.
 */
export const HOLD_CODES = {
  login: {
    module: "login",
    submit: "LOGIN_SUBMIT",
    mismatch: "LOGIN_WRITE_MISMATCH",
    notNamed: "LOGIN_ORIGIN_NOT_NAMED",
  },
  capture: {
    module: "capture",
    submit: "CAPTURE_SUBMIT",
    mismatch: "CAPTURE_WRITE_MISMATCH",
    notNamed: "CAPTURE_ORIGIN_NOT_NAMED",
  },
} as const satisfies Record<string, {
  module: string;
  submit: string;
  mismatch: RuntimeDenyReason;
  notNamed: RuntimeDenyReason;
}>;

/**
 * The verdict on a WebSocket handshake while a strict hold is open, whatever the hold is for:
 * a socket carries writes the hold could never see, so none opens during one. The boundary
 * asks it before the hold's `judge` (a handshake is a GET and could pass for a GET form's
 * submission).
 */
export function socketDuringHold(): Decision {
  return deny(HOLD_CODES.login.mismatch, { module: "runtime" });
}

/**
 * Opens a hold for a request the runtime sends itself: exactly the expected one passes
 * (`LOGIN_SUBMIT`, or `CAPTURE_SUBMIT` for a capture), once; any other write while it is open
 * is refused (`LOGIN_WRITE_MISMATCH` / `CAPTURE_WRITE_MISMATCH`), and so is the expected one
 * itself when it goes to an origin not named (`LOGIN_ORIGIN_NOT_NAMED` /
 * `CAPTURE_ORIGIN_NOT_NAMED`).
 */
export function runtimeHold(options: RuntimeHoldOptions = {}): RuntimeHold {
  const codes = HOLD_CODES[options.purpose ?? "login"];
  let expected: RuntimeSubmission | null = null;
  let admitted = false;
  let refused: RuntimeDenyReason | undefined;
  let navigated = false;
  const wakes: (() => void)[] = [];
  const done = (write: HeldWrite, d: Decision) => {
    if (isNavigation(write)) {
      navigated = true;
      for (const w of wakes.splice(0)) w();
    }
    return Promise.resolve(d);
  };
  const refuse = (write: HeldWrite, reason: RuntimeDenyReason) => {
    refused ??= reason;
    return done(write, deny(reason, { module: codes.module }));
  };
  return {
    strict: true,
    get refused() {
      return refused;
    },
    get admitted() {
      return admitted;
    },
    expect(submission) {
      // Each expect starts a step: the next matching request is admitted once (a capture
      // keeps one hold open across its steps; null admits nothing until the next).
      expected = submission;
      admitted = false;
      navigated = false;
    },
    settled(ms) {
      if (navigated) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(navigated), ms);
        wakes.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    judge(write) {
      if (admitted || !expected || !matchesSubmission(write, expected)) {
        return refuse(write, codes.mismatch);
      }
      const origin = normalizeOrigin(expected.url);
      if (
        expected.namedOrigins &&
        !expected.namedOrigins.some((o) => normalizeOrigin(o) === origin)
      ) {
        return refuse(write, codes.notNamed);
      }
      admitted = true;
      return done(write, { decision: "allow", reason: codes.submit, module: codes.module });
    },
  };
}

/**
 * Whether `write` is a top-level navigation, or may be one: without `Sec-Fetch-*` (plain http
 * to a non-secure origin) the proxy cannot tell, and a login then settles at any write.
 */
function isNavigation(write: HeldWrite): boolean {
  if (write.dest === undefined && write.mode === undefined) return true;
  return write.dest === "document" && write.mode === "navigate";
}

/** Whether `write` is exactly `expected`: method, whole URL and entries (as a multiset). */
export function matchesSubmission(write: HeldWrite, expected: RuntimeSubmission): boolean {
  if (write.method !== expected.method.toUpperCase()) return false;
  if (expected.request === "fetch") return matchesFetch(write, expected);
  if (write.dest !== undefined && !(write.dest === "document" && write.mode === "navigate")) {
    return false;
  }
  let want: URL, got: URL;
  try {
    want = new URL(expected.url);
    got = new URL(write.url);
  } catch {
    return false;
  }
  want.hash = "";
  got.hash = "";
  if (write.method === "GET") {
    // A GET form's entries are its query (the action's own query is replaced).
    const action = new URL(want.href);
    action.search = "";
    const bare = new URL(got.href);
    bare.search = "";
    return bare.href === action.href &&
      sameEntries([...got.searchParams], expected.entries);
  }
  if (got.href !== want.href) return false;
  const type = (write.contentType ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    // A login form posts urlencoded unless its enctype says otherwise; a multipart login is
    // decoded by the operator's view, not here: it is refused rather than guessed at.
    return false;
  }
  const body = new TextDecoder("utf-8", { fatal: true });
  let text: string;
  try {
    text = body.decode(write.body);
  } catch {
    return false;
  }
  return sameEntries([...new URLSearchParams(text)], expected.entries);
}

function sameEntries(
  got: readonly (readonly [string, string])[],
  want: readonly (readonly [string, string])[],
): boolean {
  if (got.length !== want.length) return false;
  const key = ([n, v]: readonly [string, string]) => JSON.stringify([n, normalizeNewlines(v)]);
  const a = got.map(key).sort();
  const b = want.map(key).sort();
  return a.every((k, i) => k === b[i]);
}

/** Form submission turns every newline in a value into CRLF. */
function normalizeNewlines(v: string): string {
  return v.replace(/\r\n|\r|\n/g, "\r\n");
}

/** Whether `write` is exactly the runtime's own fetch: its URL, no body, not a navigation. */
function matchesFetch(write: HeldWrite, expected: RuntimeSubmission): boolean {
  if (write.body.length > 0) return false;
  if (write.dest === "document" || write.mode === "navigate") return false;
  try {
    const want = new URL(expected.url);
    const got = new URL(write.url);
    want.hash = "";
    got.hash = "";
    return got.href === want.href;
  } catch {
    return false;
  }
}
